// The MMLU-Pro question browser with the real model: the chain of thought streams into the page as
// it is written (its text grows in several steps), ends with the paper's extraction read out in a
// status line, and the ten-letter scoring shows one probability per option; axe-core stays clean.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, launch, BASE_URL, watchConsole } from './lib.mjs';

const MODEL_WAIT_MS = 420_000; // a fresh machine converts the model's weights first

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

test('chain of thought streams, then the letters are scored', { timeout: MODEL_WAIT_MS + 120_000 }, async () => {
  const page = await browser.newPage({ viewport: { width: 1000, height: 1200 } });
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/mmlu-pro/run?category=history&number=88&shots=0`);
  const lengths = new Set();
  await page.focus('button[data-cot]');
  await page.keyboard.press('Enter');
  // While it writes, the button keeps the focus and says it is busy (it is not disabled).
  assert.deepEqual(await page.evaluate(() => [document.activeElement.matches('button[data-cot]'),
    document.querySelector('button[data-cot]').getAttribute('aria-disabled')]), [true, 'true']);
  await page.waitForFunction(() => !document.querySelector('[data-verdict]').textContent.includes('writing'),
    null, { timeout: MODEL_WAIT_MS, polling: 50 }).then(() => {});
  // The text arrived in pieces: sample it while a second, shorter run streams.
  await page.click('button[data-cot]');
  const deadline = Date.now() + MODEL_WAIT_MS;
  while (Date.now() < deadline) {
    const state = await page.evaluate(() => [document.querySelector('[data-written]').textContent.length,
      document.querySelector('[data-verdict]').textContent]);
    lengths.add(state[0]);
    if (!state[1].includes('writing')) break;
    await page.waitForTimeout(30);
  }
  assert.ok(lengths.size >= 3, `the text did not grow in steps: ${[...lengths]}`);
  const verdict = await page.locator('[data-verdict]').innerText();
  assert.match(verdict, /the key is C/);
  assert.match(verdict, /It wrote \d+ tokens and stopped at (length|stop|end of text)\./);
  assert.deepEqual(await axeViolations(page), []);

  await page.click('text=Score its 4 option letters on the live model');
  await page.waitForSelector('.run-probabilities', { timeout: MODEL_WAIT_MS });
  assert.equal(await page.locator('.run-probabilities tbody tr').count(), 4);
  // The page's reading, by its stated rules, agrees with the numbers it shows.
  const shown = await page.evaluate(() => ({
    percents: [...document.querySelectorAll('.run-probabilities tbody td:last-child')].map((c) => parseFloat(c.textContent)),
    share: parseFloat(/together hold ([\d.]+)%/.exec(document.querySelector('.run-result').textContent)[1]),
    caution: document.querySelector('[data-caution]')?.textContent ?? '',
  }));
  const [first, second] = [...shown.percents].sort((a, b) => b - a);
  if (first / (first + second) < 0.54) assert.match(shown.caution, /A coin toss, not a choice/);
  if (shown.share < 49.9) assert.match(shown.caution, /hold only/);
  if (first / (first + second) > 0.56 && shown.share > 50.1) assert.equal(shown.caution, '');
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});
