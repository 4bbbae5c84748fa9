// The scoring lesson in headless Chromium: the page (axe, 320 px, dark); the two-run gate
// operated with the keyboard: its redraw equals the server's for the same state, and it reads
// lm-evaluation-harness sample logs (the hand-written fixture) and names a bad line. The
// three-scorers page, which needs the real model, is scoring-lesson-scorers.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations, launch, BASE_URL, watchConsole, screenshot } from './lib.mjs';
import { serverMatch, settle, tabTo, widgetOf } from './widget-helpers.mjs';

const HARNESS = new URL('../fixtures/harness_samples/', import.meta.url).pathname;
const files = (role) => readdirSync(join(HARNESS, role)).sort().map((name) => ({
  name, mimeType: 'application/json', buffer: readFileSync(join(HARNESS, role, name)),
}));

let browser;
let context;
before(async () => {
  browser = await launch();
  context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
});
after(async () => { await browser.close(); });

test('the lesson page: ladder, MathML, widget, axe in light and dark, 320 px', async () => {
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/scoring-lesson/`);
  assert.ok(await page.locator('h3.rung').count() >= 20);
  assert.ok(await page.locator('math').count() >= 5);
  assert.equal(await page.locator('section.widget[data-widget="two-run-gate"]').count(), 1);
  assert.deepEqual(await axeViolations(page), []);
  await page.emulateMedia({ colorScheme: 'dark' });
  assert.deepEqual(await axeViolations(page), []);
  await page.setViewportSize({ width: 320, height: 900 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= 320, `the page is ${wide} px wide at 320 px`);
  await screenshot(page, 'scoring-lesson-320-dark');
  await page.goto(`${BASE_URL}/scoring-lesson/overlap`);
  assert.deepEqual(await axeViolations(page), [], 'the data-checks page');
  assert.deepEqual(problems, []);
  await page.close();
});

test('two-run gate: keyboard, server match, harness files, a bad line named', async () => {
  const name = 'two-run-gate';
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/scoring-lesson/widgets/${name}`);
  await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
  const widget = widgetOf(page, name);
  await settle(page, name, 0);
  assert.match(await widget.locator('.widget-summary').innerText(), /The example: SmolLM2-135M-Instruct .* over the whole MMLU test \(14,042 questions\): its 0-shot run \(production\) against its 5-shot run \(candidate\)\./);

  let renders = await tabTo(page, `#w-${name}-multiple-range`);
  await page.keyboard.press('End');
  await settle(page, name, renders);
  const match = await serverMatch(page, name);
  assert.equal(match.liveMarks, match.serverMarks);
  assert.deepEqual(match.liveSummary, match.serverSummary);
  assert.match(match.liveSummary.join(' '), /4 × SE_cl/);

  renders = Number(await widget.getAttribute('data-renders'));
  await page.setInputFiles(`#w-${name}-production`, files('production'));
  await page.setInputFiles(`#w-${name}-candidate`, files('candidate'));
  await tabTo(page, '[data-action="compare-runs"]');
  await page.keyboard.press('Enter');
  await settle(page, name, renders);
  const text = await widget.locator('.widget-summary').innerText();
  assert.match(text, /Your loaded runs\./);
  assert.match(text, /6 paired questions in 2 subjects/);
  assert.equal(await widget.locator('.fig-bar-up, .fig-bar-down').count(), 2);

  renders = Number(await widget.getAttribute('data-renders'));
  await page.setInputFiles(`#w-${name}-production`, { name: 'broken.jsonl', mimeType: 'application/json', buffer: Buffer.from('{"doc_id": 0}\n{oops') });
  await tabTo(page, '[data-action="compare-runs"]');
  await page.keyboard.press('Enter');
  await settle(page, name, renders);
  assert.match(await widget.locator('.widget-summary').innerText(), /broken\.jsonl line 1/);
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('micro against macro: choose the published run by keyboard; the redraw equals the server', async () => {
  const name = 'micro-macro';
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/scoring-lesson/widgets/${name}`);
  await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
  await settle(page, name, 0);
  const widget = widgetOf(page, name);
  assert.match(await widget.locator('.widget-summary').innerText(), /Table 1's GPT-3 X-Large/);
  const renders = await tabTo(page, `#w-${name}-source`);
  await page.keyboard.press('End'); // the last choice: the live model's published 5-shot run
  await settle(page, name, renders);
  const match = await serverMatch(page, name);
  assert.equal(match.liveMarks, match.serverMarks);
  assert.deepEqual(match.liveSummary, match.serverSummary);
  assert.match(match.liveSummary.join(' '), /published 5-shot run over all 14,042 test questions/);
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});
