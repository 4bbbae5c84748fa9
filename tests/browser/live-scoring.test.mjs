// "Run it yourself": a reader picks a real question, runs the real model from the page, and sees
// the bars, the verdict and the exact prompt; a result that is a coin toss, or whose probability is
// mostly off the letters, is said so by the page's stated rule (checked here against the numbers the
// page shows); a form mistake is shown in words; the page stays usable at 320 px and in dark mode,
// with no console errors and no axe violations. (tests/browser/live-form.test.mjs checks the form
// itself without running the model.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, launch, BASE_URL, screenshot } from './lib.mjs';

// The first run on a fresh machine converts the model's weights before it can answer.
const MODEL_WAIT_MS = 420_000;

// Console errors and page errors, like lib.mjs's watchConsole, except the browser's own favicon
// request (the site has no favicon yet; that 404 is not this page's doing).
function watchConsole(page) {
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.location().url.includes('/favicon.ico')) problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(String(err)));
  return problems;
}

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

test('a real question runs from the page and shows bars, verdict and prompt', { timeout: MODEL_WAIT_MS + 60_000 }, async () => {
  const page = await browser.newPage({ viewport: { width: 1000, height: 1400 } });
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/mmlu/run`);
  assert.deepEqual(await axeViolations(page), []);

  await page.selectOption('#ls-subject', 'astronomy');
  await page.fill('#ls-number', '3'); // numbered from 1: the file's third row
  await page.dispatchEvent('#ls-number', 'change');
  await page.waitForFunction(() => document.querySelector('[data-ls-preview]').textContent.includes('Why is the sky blue?'));
  // Only the chosen question's fieldset shows once the script runs.
  assert.equal(await page.isVisible('[data-ls-panel="own"]'), false);

  await page.click('[data-ls-run]');
  assert.equal(await page.isVisible('[data-ls-progress]'), true, 'a progress indicator shows while it runs');
  await page.waitForSelector('[data-ls-verdict]', { timeout: MODEL_WAIT_MS });

  const verdict = await page.textContent('[data-ls-verdict]');
  assert.match(verdict, /Prediction: [ABCD]/);
  assert.match(verdict, /key: C/);
  assert.match(verdict, /right|wrong/);
  assert.equal(await page.locator('.ls-bar-row').count(), 4);
  const percents = await page.$$eval('.ls-bar-value', (cells) => cells.map((c) => parseFloat(c.textContent)));
  assert.ok(Math.abs(percents.reduce((a, b) => a + b, 0) - 100) < 0.5, `bars sum to 100%: ${percents}`);
  const prompt = await page.textContent('[data-ls-prompt]');
  assert.ok(prompt.startsWith('The following are multiple choice questions (with answers) about astronomy.\n\nWhy is the sky blue?\nA. '));
  assert.ok(prompt.endsWith('Answer:'));
  assert.equal(await page.locator('[data-ls-prompt] .part-option').count(), 4);
  assert.equal(await page.isVisible('[data-ls-progress]'), false);
  assert.match(await page.textContent('.ls-facts'), /astronomy, test split, question 3/);
  await checkReading(page);
  for (const [width, colorScheme] of [[1280, 'light'], [1280, 'dark'], [360, 'light'], [360, 'dark']]) {
    await page.setViewportSize({ width, height: 1400 });
    await page.emulateMedia({ colorScheme });
    await page.locator('[data-ls-verdict]').scrollIntoViewIfNeeded();
    await screenshot(page, `live-scoring-result-${width}-${colorScheme}`);
    assert.deepEqual(await axeViolations(page), [], `axe at ${width} px, ${colorScheme}`);
  }
  await page.setViewportSize({ width: 1000, height: 1400 });
  await page.emulateMedia({ colorScheme: 'light' });

  // The coin toss: high school geography, question 6, no worked examples.
  await page.selectOption('#ls-subject', 'high_school_geography');
  await page.fill('#ls-number', '6');
  await page.dispatchEvent('#ls-number', 'change');
  await page.click('[data-ls-run]');
  await page.waitForFunction(() => document.querySelector('.ls-facts')?.textContent.includes('geography, test split, question 6'),
    null, { timeout: MODEL_WAIT_MS });
  const reading = await checkReading(page);
  assert.ok(reading.close, `question 6 splits its top two letters ${reading.split.toFixed(3)}, a coin toss`);
  assert.match(await page.textContent('[data-ls-caution]'), /A coin toss, not a choice\.[\s\S]*closer than 55:45/);
  assert.match(await page.textContent('[data-ls-status]'), /A coin toss, not a choice/);
  await page.locator('[data-ls-caution]').scrollIntoViewIfNeeded();
  await screenshot(page, 'live-scoring-coin-toss');

  // Two worked examples, and the full-option method: the prompt grows, the method is named.
  await page.locator('.ls-more > summary').click(); // "More settings"
  await page.selectOption('#ls-shots', '2');
  await page.selectOption('#ls-method', 'option');
  await page.click('[data-ls-run]');
  await page.waitForFunction(() => document.querySelector('.ls-bars figcaption')?.textContent.includes('Full-option'),
    null, { timeout: MODEL_WAIT_MS });
  assert.equal(await page.locator('[data-ls-prompt] .part-shot').count(), 2);
  assert.deepEqual(problems, []);
  await page.close();
});

// The page's reading of the result, checked against the numbers it shows: a coin toss when the top
// two letters split closer than 55:45, mass mostly elsewhere when the letters hold under half of the
// next token's probability (letter method). Returns the figures, recomputed from the page.
async function checkReading(page) {
  const shown = await page.evaluate(() => ({
    percents: [...document.querySelectorAll('.ls-bar-value')].map((c) => parseFloat(c.textContent)),
    share: parseFloat(document.querySelector('.ls-mass strong')?.textContent ?? 'NaN'),
    letter: /Letter probabilities/.test(document.querySelector('.ls-bars figcaption').textContent),
    headline: document.querySelector('[data-ls-caution-headline]')?.textContent ?? null,
    notes: document.querySelector('[data-ls-caution]')?.textContent ?? '',
  }));
  const [first, second] = [...shown.percents].sort((a, b) => b - a);
  const split = first / (first + second);
  const close = split < 0.55;
  const elsewhere = shown.letter && shown.share < 50;
  if (Math.abs(split - 0.55) > 0.002 && Math.abs(shown.share - 50) > 0.1) { // the page rounds to 0.1 %
    const expected = close ? 'A coin toss, not a choice.'
      : elsewhere ? "Most of the model's probability is on no letter at all." : null;
    assert.equal(shown.headline, expected, `split ${split.toFixed(3)}, letters ${shown.share}%`);
  }
  if (close) {
    const said = parseFloat(/gets ([\d.]+)%/.exec(shown.notes)?.[1]);
    assert.ok(Math.abs(said - 100 * split) < 0.3, `the note's split ${said}% against ${(100 * split).toFixed(2)}% from the bars`);
  }
  if (elsewhere) assert.ok(shown.notes.includes(`hold only ${shown.share.toFixed(1)}%`), shown.notes);
  return { split, close, elsewhere };
}

test('a mistake in the own-question form is shown in words, by keyboard alone', async () => {
  const page = await browser.newPage({ viewport: { width: 1000, height: 1200 } });
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/mmlu/run`);
  await page.focus('[data-ls-source][value="own"]');
  await page.keyboard.press('Space');
  assert.equal(await page.isVisible('#ls-question'), true);
  await page.fill('#ls-choice-a', 'one');
  await page.focus('#ls-choice-b');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-ls-error]');
  assert.match(await page.textContent('[data-ls-error]'), /question is empty/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('readable at 320 px and in dark mode', async () => {
  const page = await browser.newPage({ viewport: { width: 320, height: 900 }, colorScheme: 'dark' });
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/mmlu/run`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at 320 px (overflow ${overflow}px)`);
  await screenshot(page, 'live-scoring-320-dark');
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the widget renders alone for embedding, with its form', async () => {
  const page = await browser.newPage({ viewport: { width: 700, height: 900 } });
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/embed/mmlu/live-scoring`);
  assert.ok(await page.isVisible('[data-ls-widget] [data-ls-run]'));
  assert.equal(await page.getAttribute('[data-ls-form]', 'target'), '_top');
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});
