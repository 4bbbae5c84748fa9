// The scoring lesson's three-scorers page in headless Chromium with the real model, keyboard only:
// a reader picks a real question and scores it; the page shows each scorer's decision with the
// prompt as plain text and in the chat template (letter log-likelihood, full answer summed and per
// character, generated and parsed), and each side's prompt; axe in light and dark; no sideways
// scrolling at 360 px; screenshots at 360 and 1280 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ARTIFACTS, axeViolations, launch, BASE_URL, watchConsole } from './lib.mjs';

// A fresh machine converts the model's weights before the first answer; a loaded one is slow.
const MODEL_WAIT_MS = 420_000;
const DECISION = /^([ABCD]|no letter)$/;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

async function tabUntil(page, id) {
  for (let i = 0; i < 80; i += 1) {
    if (await page.evaluate(() => document.activeElement.id) === id) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`Tab never reached #${id}`);
}

test('three scorers: one question, every decision and prompt, with and without the chat template',
  { timeout: MODEL_WAIT_MS + 120_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const problems = watchConsole(page);
    await page.goto(`${BASE_URL}/scoring-lesson/three-scorers`);
    const published = await page.locator('.ts-published').innerText();
    for (const score of ['0.636', '0.637', '0.488']) assert.ok(published.includes(score), score);
    assert.doesNotMatch(await page.locator('main').innerText(), /not in this version/i);

    await tabUntil(page, 'ts-subject');
    await page.keyboard.type('virology'); // a select moves to the option typed
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('3');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('1');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Score it three ways');
    await Promise.all([page.waitForNavigation({ timeout: MODEL_WAIT_MS }), page.keyboard.press('Enter')]);

    assert.match(await page.locator('#results-title').innerText(), /virology question 3 \(answer key: [ABCD]\)/);
    assert.match(await page.locator('#results').innerText(), /with 1 worked example\./);
    const table = page.locator('.ts-decisions tbody tr');
    assert.equal(await table.count(), 4);
    const scorers = (await page.locator('.ts-decisions tbody th').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
    assert.deepEqual(scorers, ['Letter log-likelihood mmlu, acc', 'Full answer, summed mmlu_continuation, acc',
      'Full answer, per character mmlu_continuation, acc_norm', 'Generated, then parsed mmlu_generative, exact_match']);
    for (const side of ['plain', 'chat']) {
      const decisions = await page.locator(`.ts-decisions td[data-side="${side}"] [data-role="decision"]`).allTextContents();
      assert.equal(decisions.length, 4, side);
      for (const decision of decisions) assert.match(decision, DECISION);

      const prompts = await page.locator(`.ts-side[data-side="${side}"] .prompt-text`).allTextContents();
      assert.equal(prompts.length, 3, `${side}: a prompt per scorer`);
      const start = side === 'plain' ? '' : '<|im_start|>system\n';
      assert.ok(prompts[0].startsWith(`${start}The following are multiple choice questions (with answers) about virology.`), prompts[0]);
      assert.ok(prompts[1].startsWith(`${start}The following are questions (with answers) about virology.`), prompts[1]);
      assert.equal(prompts[2], prompts[0], 'mmlu_generative reads the mmlu prompt');
      assert.equal(prompts[0].endsWith('<|im_start|>assistant\n'), side === 'chat');

      // Each side's heading says the same decision the table does.
      const letterHeading = await page.locator(`.ts-side[data-scorer="letter"][data-side="${side}"] h4`).innerText();
      assert.ok(letterHeading.endsWith(`: ${decisions[0]}`), letterHeading);
      const parsed = await page.locator(`.ts-side[data-scorer="generation"][data-side="${side}"] dd`).last().innerText();
      assert.equal(parsed, decisions[3]);
    }

    // The results read by keyboard: a prompt is a focusable scrolling region.
    await page.locator('.prompt-text').first().focus();
    assert.equal(await page.evaluate(() => document.activeElement.className), 'prompt-text');
    assert.deepEqual(await axeViolations(page), []);
    await page.screenshot({ path: path.join(ARTIFACTS, 'three-scorers-1280.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.deepEqual(await axeViolations(page), []);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 360, height: 900 });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 360, `the page is ${wide} px wide at 360 px`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'three-scorers-360.png'), fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  });

test('three scorers: a question number past the subject says what to fix', { timeout: 60_000 }, async () => {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  await page.goto(`${BASE_URL}/scoring-lesson/three-scorers`);
  await page.fill('#ts-index', '100000');
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  assert.match(await page.locator('[role="alert"]').innerText(), /index must be from 0 to \d+, got 100000/);
  await page.close();
});
