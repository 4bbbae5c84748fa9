// The static export (engine/export.py) read in Chromium, served from a sub-path by a plain file
// server (EXPORT_URL, given by tests/browser/test_static_export.py; no Flask running).
//
// At 360 and 1280 px each document answers with no failed request and none to another origin. At
// 1280 every widget on the three documents is changed once, as a reader does it (a key on a number
// box, a choice in a list), and must be drawn again by the worker (the prompt anatomy, drawn by the
// server on the live site, too: from the questions the export wrote, the same prompt the server
// makes). A new version of the export replaces the offline copy on the next visit. axe checks the export's
// own pages whole (the home page, a widget page, an embed) and, on the documents, what the export
// draws differently from the live site (a live widget's note, a widget the server draws); the
// documents' own accessibility is page.test.mjs's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { axeViolations, launch, screenshot, watchConsole } from './lib.mjs';

const EXPORT_URL = process.env.EXPORT_URL;
const EXPORT_DIR = process.env.EXPORT_DIR; // the served folder: the version-change step rewrites its service worker
const DOCUMENTS = ['mmlu', 'mmlu-pro', 'scoring-lesson'];

// Every request the page makes: those that failed, and those to another origin.
function watchRequests(page) {
  const origin = new URL(EXPORT_URL).origin;
  const wrong = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(`${origin}/`) && !request.url().startsWith('data:') && !request.url().startsWith('blob:')) {
      wrong.push(`another origin: ${request.url()}`);
    }
  });
  page.on('response', (response) => { if (response.status() >= 400) wrong.push(`${response.status()} ${response.url()}`); });
  // A request the page itself cancelled by moving on (net::ERR_ABORTED) is not a missing file.
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') wrong.push(`failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  return wrong;
}

// Change the widget's first setting as a reader would; resolves once it has been drawn again.
// `frame`: the frame the widget is in (a package inside a learning platform's page).
async function changeOnce(page, widget, frame = page) {
  // Its script listens to its form first (data-ready): in a package's frame, a key pressed before that
  // changed the number and nothing else, and the wait below ran out (CI, once).
  await frame.waitForFunction((el) => el.dataset.ready === 'true', await widget.elementHandle(), { timeout: 90_000 });
  const before = Number(await widget.getAttribute('data-renders') || 0);
  const control = widget.locator('form.widget-controls :is(input[type="number"], select, input[type="checkbox"]):visible').first();
  if (await control.evaluate((el) => el.type === 'checkbox')) {
    await control.focus();
    await page.keyboard.press('Space');
  } else if (await control.evaluate((el) => el.tagName === 'SELECT')) {
    const values = await control.locator('option').evaluateAll((options) => options.map((o) => o.value));
    const current = await control.inputValue();
    await control.selectOption(values.find((value) => value !== current));
  } else {
    await control.focus();
    const atMax = await control.evaluate((el) => el.max !== '' && Number(el.value) >= Number(el.max));
    await page.keyboard.press(atMax ? 'ArrowDown' : 'ArrowUp');
  }
  await frame.waitForFunction(([el, n]) => Number(el.dataset.renders || 0) > n && !el.hasAttribute('aria-busy'),
    [await widget.elementHandle(), before], { timeout: 90_000 });
}

// One page for every test: the worker's memory snapshot, stored on the first document, starts
// Python on the next ones (as it would for a reader going from one to the next).
describe('the static export, served from a sub-path by a file server', () => {
  let browser;
  let context;
  let page;
  let wrong;
  let problems;
  before(async () => {
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // The first visit saves the whole copy (Pyodide's 30 MiB among it) while the pages load: on two
    // busy cores a page's load took 30 s once.
    context.setDefaultNavigationTimeout(90_000);
    page = await context.newPage();
    wrong = watchRequests(page);
    problems = watchConsole(page);
  });
  after(async () => { await browser?.close(); });

  // Each document's export page at a width: it answers, it is the export's, a picture of it.
  async function visit(slug, width) {
    const response = await page.goto(`${EXPORT_URL}${slug}/`, { waitUntil: 'load' });
    assert.equal(response.status(), 200, slug);
    assert.ok(await page.locator('html[data-static-export]').count(), `${slug} is the export's page`);
    await screenshot(page, `static-export-${slug}-${width}`);
  }

  test('every document at 360 px: no failed request, none to another origin', async () => {
    await page.setViewportSize({ width: 360, height: 900 });
    for (const slug of DOCUMENTS) await visit(slug, 360);
    assert.deepEqual(wrong, []);
    assert.deepEqual(problems, []);
  });

  // At 1280 px (the same visits: the widgets are changed there).
  test('every document at 1280 px: every widget, the worker\'s and the server\'s, is drawn again on input', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const redrawn = [];
    for (const slug of DOCUMENTS) {
      await visit(slug, 1280);
      const widgets = page.locator('section.widget[data-driver="worker"]');
      const count = await widgets.count();
      assert.ok(count > 0, `${slug} has widgets`);
      for (let i = 0; i < count; i += 1) {
        const widget = widgets.nth(i);
        await widget.scrollIntoViewIfNeeded();
        await changeOnce(page, widget);
        assert.equal(await widget.getAttribute('data-worker'), 'ready', 'drawn by the worker, not a server');
        redrawn.push(`${slug}/${await widget.getAttribute('data-widget')}`);
      }
      // A widget drawn by the server (the prompt anatomy, from the dataset) is drawn by the worker here,
      // from the questions the export wrote beside the document: the same prompt the live site's server makes.
      for (const drawn of await page.locator('section.widget[data-driver="server"]').all()) {
        const expected = JSON.parse(process.env.PROMPT);
        const before = Number(await drawn.getAttribute('data-renders') || 0);
        await drawn.scrollIntoViewIfNeeded();
        await drawn.locator('select[name="subject"]').selectOption(expected.subject);
        await drawn.getByText('More settings').click();
        await drawn.locator('input[name="q"]').fill(String(expected.q));
        await page.waitForFunction(([el, n, text]) => Number(el.dataset.renders || 0) > n && !el.hasAttribute('aria-busy')
          && el.querySelector('[data-fragment="prompt-text"]').textContent === text,
        [await drawn.elementHandle(), before, expected.text], { timeout: 90_000 });
        assert.equal(await drawn.getAttribute('data-worker'), 'ready', 'drawn by the worker, not a server');
        assert.match(await drawn.locator('.widget-summary').textContent(), new RegExp(`The answer key is ${expected.key}\\.`));
        redrawn.push(`${slug}/${await drawn.getAttribute('data-widget')}`);
      }
      if (slug === 'mmlu') await screenshot(page, 'static-export-mmlu-redrawn-1280');
    }
    console.log(`redrawn: ${redrawn.join(', ')}`);
    assert.ok(redrawn.length >= 12, redrawn.join(', '));
    assert.deepEqual(wrong, []);
    assert.deepEqual(problems, []);
  });

  test('offline: after one visit a document reads, redraws and runs a snippet', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${EXPORT_URL}scoring-lesson/`, { waitUntil: 'load' });
    const note = page.locator('#offline-note');
    await note.waitFor({ state: 'visible', timeout: 90_000 });
    assert.match(await note.textContent(), /^Saved for reading offline on \d+ \w+ \d{4}.*needs the network\.$/);
    assert.ok(await note.getAttribute('data-version'), 'the note names the saved version');

    await context.setOffline(true);
    await page.reload({ waitUntil: 'load' });
    assert.ok(await page.locator('h1').first().isVisible());
    await note.waitFor({ state: 'visible' });
    const widget = page.locator('section.widget[data-driver="worker"]').first();
    await widget.scrollIntoViewIfNeeded();
    const started = performance.now();
    await changeOnce(page, widget);
    console.log(`offline: first redrawn chart ${Math.round(performance.now() - started)} ms after the key`);
    const snippet = page.locator('.snippet:not([data-runs="server"])').first();
    await snippet.getByRole('button', { name: 'Edit and run' }).click();
    await snippet.locator('.cm-content').waitFor({ timeout: 30_000 });
    await snippet.getByRole('button', { name: 'Run', exact: true }).click();
    await snippet.locator('.snippet-run:not([disabled])').waitFor({ timeout: 60_000 });
    assert.match(await snippet.locator('.snippet-verdict').textContent(), /^Same as the page/);
    await screenshot(page, 'static-export-offline-1280');
    await context.setOffline(false);

    assert.deepEqual(wrong.filter((line) => !line.startsWith('failed:')), []);
  });

  // Another reader, whose copy was saved by one visit (a context of its own: no Python running in it,
  // whose requests the old worker would still be answering when the new one is ready to take over).
  test('a new version of the export replaces the saved copy on the next online visit', async () => {
    const reader = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const visit = await reader.newPage();
      await visit.goto(`${EXPORT_URL}scoring-lesson/`, { waitUntil: 'load' });
      const note = visit.locator('#offline-note');
      await note.waitFor({ state: 'visible', timeout: 90_000 });
      const version = await note.getAttribute('data-version');
      // A new export: here, its service worker with another version.
      const file = path.join(EXPORT_DIR, 'service-worker.js');
      const source = readFileSync(file, 'utf8');
      writeFileSync(file, source.replace(`'${version}'`, `'${version}-next'`));
      try {
        const started = performance.now();
        await visit.reload({ waitUntil: 'load' });
        // Polled by time, not by frames.
        await visit.waitForFunction((next) => document.querySelector('#offline-note')?.dataset.version === next,
          `${version}-next`, { timeout: 120_000, polling: 250 });
        console.log(`new version: saved again ${Math.round(performance.now() - started)} ms after the reload`);
        assert.match(await note.textContent(), /^Saved for reading offline on /);
        const names = await visit.evaluate(async (next) => { // the older copy is deleted as the new one takes over
          for (let tries = 0; tries < 300; tries += 1) {
            const found = (await caches.keys()).filter((name) => name.startsWith('papers-offline-'));
            if (found.length === 1 && found[0] === next) return found;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          return caches.keys();
        }, `papers-offline-${version}-next`);
        assert.deepEqual(names, [`papers-offline-${version}-next`]);
      } finally {
        writeFileSync(file, source);
      }
    } finally {
      await reader.close();
    }
  });

  test("a widget's SCORM 1.2 package in a platform with scorm-again: initialised, completed after a change, finished", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${process.env.LMS_URL}index.html`, { waitUntil: 'load' });
    await page.addScriptTag({ url: `${process.env.LMS_URL}scorm12.min.js` });
    await page.evaluate((launch) => {
      window.API = new window.Scorm12API({ autocommit: false, logLevel: 5 });
      window.calls = [];
      for (const name of ['LMSInitialize', 'LMSSetValue.cmi.core.lesson_status', 'LMSCommit', 'LMSFinish']) {
        window.API.on(name, (...args) => window.calls.push([name, ...args.map(String)]));
      }
      const frame = document.createElement('iframe');
      frame.title = 'The widget';
      frame.style.cssText = 'width: 900px; height: 860px; border: 0';
      frame.src = launch;
      document.querySelector('main').append(frame);
    }, process.env.SCORM_LAUNCH);
    await page.waitForFunction(() => window.calls.some(([name]) => name === 'LMSInitialize'), null, { timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.API.cmi.core.lesson_status), 'not attempted');
    const frame = page.frames().find((f) => f.url().includes(process.env.SCORM_LAUNCH));
    const widget = frame.locator('section.widget');
    await widget.waitFor();
    await changeOnce(page, widget, frame);
    await page.waitForFunction(() => window.API.cmi.core.lesson_status === 'completed', null, { timeout: 30_000 });
    await screenshot(page, 'static-export-scorm-1280');
    await page.evaluate(() => document.querySelector('iframe').remove()); // the learner leaves: pagehide
    await page.waitForFunction(() => window.calls.some(([name]) => name === 'LMSFinish'), null, { timeout: 30_000 });
    const calls = await page.evaluate(() => window.calls.map(([name, ...args]) => `${name}${args.length ? ` ${args.join(' ')}` : ''}`));
    assert.deepEqual(calls.map((call) => call.split(' ')[0]), ['LMSInitialize', 'LMSSetValue.cmi.core.lesson_status', 'LMSCommit', 'LMSFinish']);
    assert.match(calls[1], /completed/);
    assert.deepEqual(wrong, []);
    assert.deepEqual(problems, []);
  });

  test("the live-scoring widget answers a standard question with the published run's answer, named", async () => {
    const expected = JSON.parse(process.env.PUBLISHED);
    await page.setViewportSize({ width: 360, height: 800 });
    await page.goto(`${EXPORT_URL}embed/mmlu/live-scoring.html`, { waitUntil: 'load' });
    await page.waitForSelector('[data-published-answers][data-shown]');
    await page.selectOption('#lsp-subject', expected.subject);
    await page.locator('#lsp-number').fill(String(expected.number));
    await page.selectOption('#lsp-run', expected.run);
    await page.waitForFunction((shown) => document.querySelector('[data-shown]').dataset.shown === shown,
      `${expected.subject}/${expected.number}/${expected.run}`);
    const said = await page.locator('[data-role="answer"]').innerText();
    assert.match(said, new RegExp(`The published run ${expected.run} \\(letter method, 0 examples;`));
    assert.match(said, new RegExp(`answered ${expected.prediction}: ${expected.correct ? 'right' : 'wrong'}, the key is ${expected.key}\\.`));
    assert.match(said, /Its probabilities for the next token: “ A” \d/);
    // Every run's label fits the phone's form (a select is as wide as its longest option).
    const widths = await page.locator('#lsp-run').evaluate((el) => [el.scrollWidth, el.closest('form').clientWidth]);
    assert.ok(widths[0] <= widths[1], `the run's select is ${widths[0]} px in a form of ${widths[1]} px`);
    await screenshot(page, 'static-export-published-answer-360');
    assert.deepEqual(await axeViolations(page), []);

    // MMLU-Pro's question browser (the document links to it: the crawl follows that) answers its published sample.
    const pro = JSON.parse(process.env.PUBLISHED_PRO);
    await page.goto(`${EXPORT_URL}mmlu-pro/run.html`, { waitUntil: 'load' });
    await page.waitForSelector('[data-published-answers][data-shown]');
    assert.match(await page.locator('h1').innerText(), /on the live site only/);
    await page.selectOption('#pa-subject', { label: pro.subject });
    await page.locator('#pa-number').fill(String(pro.number));
    await page.waitForFunction((shown) => document.querySelector('[data-shown]').dataset.shown === shown,
      `${pro.subject.replace(' ', '-')}/${pro.number}/${pro.run}`);
    assert.match(await page.locator('#pa-number-hint').innerText(), /^1 to 100: the first 100 of its 410, which the run answered$/);
    const proSaid = await page.locator('[data-role="answer"]').innerText();
    assert.match(proSaid, new RegExp(`The published run ${pro.run} \\(letter method, 0 examples;`));
    assert.match(proSaid, new RegExp(`answered ${pro.prediction}: ${pro.correct ? 'right' : 'wrong'}, the key is ${pro.key}\\.`));
    assert.ok(await page.locator('[data-role="choices"] li').count() > 4, 'all the options of an MMLU-Pro question');
    await screenshot(page, 'static-export-mmlu-pro-published-360');
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(wrong, []);
  });

  test("a widget page reads its settings from its address; a live widget says it needs the live site", async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    await page.goto(`${EXPORT_URL}mmlu/widgets/chance-explorer.html?n=500&score=0.4`, { waitUntil: 'load' });
    const widget = page.locator('section.widget[data-widget="chance-explorer"]');
    await page.waitForFunction(() => document.querySelector('section.widget').dataset.query?.includes('n=500'), null, { timeout: 90_000 });
    assert.equal(await widget.locator('input[name="n"]').inputValue(), '500');
    assert.equal(await widget.locator('#w-chance-explorer-score').inputValue(), '40'); // the share, in its percent box
    assert.match(await widget.getAttribute('data-query'), /score=0\.4(&|$)/);
    assert.match(await widget.locator('.widget-summary').textContent(), /500/);
    assert.equal(await widget.locator('[data-share="page"]').inputValue(),
      `${EXPORT_URL}mmlu/widgets/chance-explorer.html?${await widget.getAttribute('data-query')}`);
    assert.deepEqual(await axeViolations(page), []);
    await screenshot(page, 'static-export-widget-page-360');

    await page.goto(`${EXPORT_URL}embed/scoring-lesson/three-scorers.html`, { waitUntil: 'load' });
    assert.match(await page.locator('[data-live-elsewhere]').textContent(), /works on the live site only/);
    assert.deepEqual(await axeViolations(page), []);
    await page.goto(`${EXPORT_URL}mmlu/`, { waitUntil: 'load' });
    assert.deepEqual(await axeViolations(page, { within: ['[data-live-elsewhere]', 'section.widget[data-driver="server"]'] }), []);
    await page.goto(EXPORT_URL, { waitUntil: 'load' });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(wrong, []);
    assert.deepEqual(problems, []);
  });
});
