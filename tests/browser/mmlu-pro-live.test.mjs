// The MMLU-Pro question browser with the real model. Scoring the option letters answers in place, as
// MMLU's live scoring does (the same component): no page load, the scroll position kept, a status
// line, one bar per option and a verdict. The chain of thought says what the model does before its
// first token (reading the worked examples and the question, with the prompt's tokens and the
// seconds), then that it writes (tokens and seconds), streams its text in steps, and ends with the
// paper's extraction and, in words, why it stopped (the reader's Stop too). The first token's time on
// a warm server (the category's worked examples already read) is measured and printed. axe-core stays
// clean. The letters' wait shows what it waits for and its seconds; on a phone the text being written
// is kept on screen, and a reader who scrolls away is left there (issue 40). Screenshots at 360 and
// 1280 px, light and dark, mid-generation and after.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, launch, BASE_URL, screenshot, watchConsole } from './lib.mjs';

const MODEL_WAIT_MS = 420_000; // a fresh machine converts the model's weights first
// The warm first token is measured, and held to this generous bound only: the 2 shared cores of the
// test machine make its time vary several-fold (bench/first_token.py prints it alone).
const WARM_FIRST_TOKEN_BOUND_S = 40; // 20.6 s seen in a clean-clone run with the suite beside it
const STOPPED = /It wrote \d+ tokens? and stopped because (it ended its answer \(the model's end-of-text token\)|it reached the cap of 256 new tokens|it began another question \(“Question:”\), where the protocol ends the answer)\./;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

const progressText = (page) => page.locator('[data-cot-progress]').innerText();

// Every text the chain of thought's progress line shows, in order (a MutationObserver in the page).
async function watchProgress(page) {
  await page.evaluate(() => {
    window.progressSeen = [];
    const line = document.querySelector('[data-cot-progress]');
    new MutationObserver(() => window.progressSeen.push(line.textContent))
      .observe(line, { childList: true, characterData: true, subtree: true });
  });
}

test('scoring answers in place; the chain of thought says what it does and why it stopped', { timeout: 4 * MODEL_WAIT_MS }, async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/mmlu-pro/run?category=history&number=88&shots=5`);
  let loads = 0;
  page.on('load', () => { loads += 1; });
  await page.evaluate(() => window.scrollTo(0, 250));
  const scrolled = await page.evaluate(() => window.scrollY);
  assert.ok(scrolled > 0, 'the page scrolls');

  // -- the letters, in place --
  await page.focus('[data-ls-run]');
  await page.keyboard.press('Enter');
  assert.deepEqual(await page.evaluate(() => [document.activeElement.matches('[data-ls-run]'),
    document.querySelector('[data-ls-run]').getAttribute('aria-disabled')]), [true, 'true']);
  // The wait says what it waits for, with its seconds (issue 40).
  assert.match(await page.locator('[data-ls-progress-text]').innerText(),
    /^(Scoring: the model is reading the prompt|Warming up: the model is loading) · \d+ s$/);
  await page.waitForSelector('[data-ls-results] [data-ls-verdict]', { timeout: MODEL_WAIT_MS });
  assert.equal(loads, 0, 'scoring loaded no page');
  assert.ok(await page.evaluate(() => window.scrollY) >= scrolled, 'the page did not jump back to the top');
  assert.match(await page.locator('[data-ls-status]').innerText(),
    /^Scored\. Prediction: [A-D] · key: C · (right|wrong) · confidence [\d.]+%\./);
  assert.equal(await page.locator('[data-ls-results] .ls-bar-row').count(), 4);
  assert.ok(await page.locator('[data-ls-results] [data-ls-bars]').isVisible()
    && await page.locator('[data-ls-results] [data-ls-verdict]').isVisible());
  // The page's reading, by its stated rules, agrees with the numbers it shows.
  const shown = await page.evaluate(() => ({
    percents: [...document.querySelectorAll('[data-ls-results] .ls-bar-value')].map((c) => parseFloat(c.textContent)),
    share: parseFloat(/together hold ([\d.]+)%/.exec(document.querySelector('.run-result').textContent)[1]),
    caution: document.querySelector('[data-ls-caution]')?.textContent ?? '',
  }));
  const [first, second] = [...shown.percents].sort((a, b) => b - a);
  if (first / (first + second) < 0.54) assert.match(shown.caution, /A coin toss, not a choice/);
  if (shown.share < 49.9) assert.match(shown.caution, /hold only/);
  if (first / (first + second) > 0.56 && shown.share > 50.1) assert.equal(shown.caution, '');
  assert.deepEqual(await axeViolations(page), []);

  // -- the chain of thought, cold: it reads the worked examples first, then writes. On a phone, where
  // the panel starts below the fold, the end of what is written is kept on screen (issue 40) --
  await page.setViewportSize({ width: 360, height: 780 });
  await watchProgress(page);
  await page.focus('button[data-cot]');
  await page.keyboard.press('Enter');
  const endOnScreen = () => page.evaluate(() => {
    const box = document.querySelector('.run-cot-actions').getBoundingClientRect();
    return box.bottom >= 0 && box.bottom <= window.innerHeight;
  });
  assert.ok(await endOnScreen(), 'the panel is brought on screen when the wait begins');
  // While it writes, the button keeps the focus and says it is busy (it is not disabled).
  assert.deepEqual(await page.evaluate(() => [document.activeElement.matches('button[data-cot]'),
    document.querySelector('button[data-cot]').getAttribute('aria-disabled')]), [true, 'true']);
  // Before its first token (the category's worked examples are read for the first time here).
  await page.waitForFunction(() => /^Reading /.test(document.querySelector('[data-cot-progress]').textContent),
    null, { timeout: MODEL_WAIT_MS, polling: 50 });
  await screenshot(page, 'mmlu-pro-cot-reading-360-light');
  // Its text being written (a picture only: this generation is left to run to its end).
  await page.waitForFunction(() => document.querySelector('[data-written]').textContent.length > 20
    || /stopped because/.test(document.querySelector('[data-verdict]').textContent), null, { timeout: MODEL_WAIT_MS, polling: 50 });
  assert.ok(await endOnScreen(), 'the text being written is on screen');
  await screenshot(page, 'mmlu-pro-cot-writing-360-light');
  await page.waitForFunction(() => /stopped because/.test(document.querySelector('[data-verdict]').textContent),
    null, { timeout: MODEL_WAIT_MS, polling: 100 });
  const seen = await page.evaluate(() => window.progressSeen);
  const reading = seen.findIndex((t) => /^Reading the 5 worked examples and the question: [\d,]+ tokens/.test(t));
  const writing = seen.findIndex((t) => /^Writing: \d+ tokens? in [\d.]+ s$/.test(t));
  assert.ok(reading >= 0 && writing > reading, `reading, then writing: ${seen.slice(0, 3)} … ${seen.at(-1)}`);
  const verdict = await page.locator('[data-verdict]').innerText();
  assert.match(verdict, /the key is C/);
  assert.match(verdict, STOPPED);
  assert.doesNotMatch(verdict, /stopped at/);
  assert.equal(loads, 0);
  assert.deepEqual(await axeViolations(page), []);

  // -- warm: the category's worked examples are cached; its first token is measured; the text
  // grows in steps; then the reader stops it (one generation for all three: a whole one costs the
  // server seconds). This question's whole answer is about 21 tokens, so Stop is pressed as soon as
  // the text has grown in steps; the pictures are taken after --
  // The reader scrolls back to the top as soon as the text starts: the page stays where they put it.
  const lengths = new Set();
  await page.click('button[data-cot]');
  const deadline = Date.now() + MODEL_WAIT_MS;
  let scrolledAwayAt = null;
  for (let length = 0; Date.now() < deadline && (lengths.size < 3 || length <= 20); await page.waitForTimeout(30)) {
    let said;
    [length, said] = await page.evaluate(() => [document.querySelector('[data-written]').textContent.length,
      document.querySelector('[data-verdict]').textContent]);
    lengths.add(length);
    assert.doesNotMatch(said, /stopped because/, 'the warm generation ended before the reader could stop it');
    if (length > 0 && scrolledAwayAt === null) {
      scrolledAwayAt = length;
      await page.evaluate(() => window.scrollTo({ top: 0, behavior: 'instant' }));
    }
  }
  assert.ok(lengths.size >= 3, `the text did not grow in steps: ${[...lengths]}`);
  assert.ok([...lengths].some((length) => length > scrolledAwayAt), 'the text grew after the reader scrolled away');
  assert.equal(await page.evaluate(() => window.scrollY), 0, 'the reader who scrolled away is not pulled back');
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.match(await progressText(page), /^Writing: \d+ tokens? in [\d.]+ s$/);
  const firstToken = Number(await page.evaluate(() => document.querySelector('[data-ls-widget]').dataset.firstTokenS));
  console.log(`first chain-of-thought token on a warm server (worked examples cached): ${firstToken} s`);
  assert.ok(firstToken > 0 && firstToken < WARM_FIRST_TOKEN_BOUND_S, `the first token took ${firstToken} s`);
  await page.click('[data-cot-stop]');
  await page.waitForFunction(() => /you stopped it/.test(document.querySelector('[data-verdict]').textContent));
  assert.match(await page.locator('[data-verdict]').innerText(),
    /^It wrote \d+ tokens? and stopped because you stopped it; no letter was read\.$/);
  assert.ok(await page.evaluate(() => document.activeElement.matches('button[data-cot]')), 'the focus is back on the button');
  assert.deepEqual(await axeViolations(page), []);
  for (const [width, scheme] of [[1280, 'light'], [1280, 'dark'], [360, 'dark'], [360, 'light']]) {
    await page.setViewportSize({ width, height: 900 });
    await page.emulateMedia({ colorScheme: scheme });
    await page.locator('[data-ls-results]').scrollIntoViewIfNeeded();
    await screenshot(page, `mmlu-pro-scored-${width}-${scheme}`);
  }
  assert.equal(loads, 0);
  assert.deepEqual(problems, []);
});
