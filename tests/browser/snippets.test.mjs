// "Edit and run" on every document's snippets, in headless Chromium: on every document the site's
// index lists (found, not listed here), every snippet with Run gives "same as the page" unedited and
// every server-only one says why and offers no Run; nothing of the editor or of
// Pyodide is fetched before a reader opens a snippet; an edited snippet runs in the page's Python
// worker and shows its new result against the page's; one reader going from document to document
// starts Python from the memory snapshot the first snippet left (made before it ran, so nothing a
// reader's code did is in it); an endless loop is stopped within the limit and the page stays
// usable; an exception reads as a Python error; Reset restores the text; axe passes with the editor
// and its result; dark mode at 320 px; without JavaScript the snippet is text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, BASE_URL, axeViolations, runtimeTimings, screenshot, snapshotStored, watchConsole } from './lib.mjs';

const RUN_LIMIT_S = 10; // static/js/snippet-editor.js's RUN_LIMIT_MS
const LATE = /\/vendor\/|\/pyodide\/|snippet-editor|python-runtime|\.whl$/;
// The documents the site's index lists, in its order.
const DOCUMENTS = [...(await (await fetch(`${BASE_URL}/`)).text())
  .matchAll(/<li class="paper-card">\s*<h2><a href="\/([^"/]+)\/">/g)].map((m) => m[1]);
// One edit for some documents: the text changed, and the first result the edited snippet should show.
const EDITS = {
  mmlu: { from: 'p, n = 0.25, 100', to: 'p, n = 0.25, 1000', result: '0.0137', page: '0.0433' },
  'mmlu-pro': { from: 'options=10', to: 'options=5', result: '0.68', page: '0.64' },
  'scoring-lesson': { from: '57, 5', to: '60, 5', result: '300', page: '285' },
};
let browser;
let visitor; // one reader's browser profile, from document to document

before(async () => {
  browser = await launch();
  visitor = await browser.newContext({ viewport: { width: 1280, height: 900 } });
});
after(async () => { await browser?.close(); });

async function reader(options = {}, context = null) {
  context ??= await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const problems = watchConsole(page);
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  return { context, page, problems, requests };
}

const editorText = async (snippet) => (await snippet.locator('.cm-line').allTextContents()).join('\n');
const verdict = (snippet) => snippet.locator('.snippet-verdict').textContent();

async function replaceCode(page, snippet, code) {
  await snippet.locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(code);
}

async function runAndWait(snippet, timeout = 180000) {
  await snippet.getByRole('button', { name: 'Run', exact: true }).click();
  await snippet.locator('.snippet-run:not([disabled])').waitFor({ timeout });
  return verdict(snippet);
}

test('the index lists every document that has an edit here', () => {
  assert.ok(DOCUMENTS.length >= 3, `documents found on the index: ${DOCUMENTS}`);
  assert.deepEqual(Object.keys(EDITS).filter((slug) => !DOCUMENTS.includes(slug)), []);
});

for (const [n, slug] of DOCUMENTS.entries()) {
  test(`${slug}: every snippet with Run gives "same as the page" unedited, a server-only one says why; an edit; Reset; nothing loads before`, { timeout: 300000 }, async (t) => {
    const { page, problems, requests } = await reader({}, visitor);
    await page.goto(`${BASE_URL}/${slug}/`);
    await page.waitForLoadState('networkidle');
    const runnable = page.locator('.snippet:not([data-runs="server"])');
    const count = await runnable.count();
    assert.ok(count >= 1);
    assert.equal(await page.locator('.snippet-edit').count(), count, 'every snippet but the server-only ones has "Edit and run"');
    const serverOnly = page.locator('.snippet[data-runs="server"]');
    for (const where of await serverOnly.locator('.snippet-where').allTextContents()) {
      assert.match(where, /^Runs on the server: \S/, 'a server-only snippet says why it has no Run');
    }
    assert.equal(await serverOnly.locator('.snippet-where').count(), await serverOnly.count());
    if (await serverOnly.count()) assert.deepEqual(await axeViolations(page, { within: serverOnly.first() }), []);
    await page.mouse.move(600, 400);
    await page.keyboard.press('Tab');
    assert.deepEqual(requests.filter((url) => LATE.test(url)), [], 'no editor or Pyodide file before a snippet is opened');

    // Every snippet with Run, unedited, as a reader would: open it, Run, read the verdict.
    const wrong = [];
    for (let i = 0; i < count; i++) {
      const snippet = runnable.nth(i);
      const original = await snippet.locator('pre code').textContent();
      await snippet.getByRole('button', { name: 'Edit and run' }).click();
      await snippet.locator('.cm-content').waitFor();
      assert.equal(await snippet.locator('pre').isHidden(), true);
      const said = await runAndWait(snippet);
      if (!/^Same as the page/.test(said)) wrong.push(`snippet ${i + 1} (${original.split('\n')[0]}): ${said}`);
      if (i > 0) continue;
      assert.ok(requests.some((url) => url.includes('/vendor/@codemirror/view@')), 'CodeMirror came from /vendor/');
      const timings = await runtimeTimings(page);
      if (n === 0) { // a fresh profile: Python starts the ordinary way and leaves its snapshot
        assert.equal(timings.worker.snapshot, undefined, JSON.stringify(timings.worker));
        await snapshotStored(page);
      } else {
        assert.equal(timings.worker.snapshot, 'restored', `the next document starts from the snapshot: ${JSON.stringify(timings.worker)}`);
      }
    }
    t.diagnostic(`${slug}: ${count - wrong.length} of ${count} snippets with Run gave "same as the page"; `
      + `${await serverOnly.count()} server-only`);
    assert.deepEqual(wrong, [], 'every snippet with Run runs unedited in the browser');

    const edit = EDITS[slug];
    if (edit) {
      const snippet = runnable.filter({ hasText: edit.from }).first();
      const original = await snippet.locator('pre code').textContent();
      // (CodeMirror draws only the lines near the viewport, so the text is read from a short snippet.)
      assert.equal(await editorText(snippet), original, 'the editor starts with the text the page shows (and the tests run)');
      await replaceCode(page, snippet, original.replace(edit.from, edit.to));
      assert.match(await runAndWait(snippet), /^You changed the inputs/);
      const first = snippet.locator('.snippet-results li').filter({ hasText: edit.result }).first();
      assert.match(await first.textContent(), new RegExp(`→ ${edit.result} \\(the page: ${edit.page}\\)`));
      assert.equal(await snippet.locator('.snippet-output').getAttribute('aria-live'), 'polite');
      assert.deepEqual(await axeViolations(page, { within: snippet }), [], 'axe: the editor and its result');
      await screenshot(page, `snippet-${slug}-edited`);

      await snippet.getByRole('button', { name: 'Reset' }).click();
      assert.equal(await editorText(snippet), original, 'Reset restores the page text');
      assert.match(await verdict(snippet), /^Reset/);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('an endless loop is stopped within the limit, the page stays usable; an exception reads as an error', { timeout: 300000 }, async () => {
  const { context, page, problems } = await reader();
  await page.goto(`${BASE_URL}/mmlu/`);
  const snippet = page.locator('.snippet').first();
  await snippet.getByRole('button', { name: 'Edit and run' }).click();
  await snippet.locator('.cm-content').waitFor();
  assert.equal(await snippet.locator('.snippet-hint').isVisible(), true, 'a keyboard\'s reader is told Ctrl+Enter runs');
  // Python is up (the limit below is the run's own), and the reader's code changed a module.
  await replaceCode(page, snippet, 'import explainers\nexplainers.left_by_a_reader = 1');
  assert.match(await runAndWait(snippet), /^You changed the inputs/);

  await replaceCode(page, snippet, 'x = 0\nwhile True:\n    x += 1');
  const started = Date.now();
  await snippet.getByRole('button', { name: 'Run', exact: true }).click();
  // While it loops, the page answers: the theme toggle works before the loop is stopped (a loop on
  // the page's own thread would hold the click until then).
  await page.waitForTimeout(1500);
  const pressed = await page.getAttribute('#theme-toggle', 'aria-pressed');
  await page.locator('#theme-toggle').click();
  assert.deepEqual(await page.evaluate(() => [document.getElementById('theme-toggle').getAttribute('aria-pressed'),
    document.querySelector('.snippet .snippet-run').disabled]), [String(pressed !== 'true'), true],
  'the theme changed while the loop was still running');
  await snippet.locator('.snippet-run:not([disabled])').waitFor({ timeout: (RUN_LIMIT_S + 20) * 1000 });
  const took = (Date.now() - started) / 1000;
  assert.match(await verdict(snippet), /^Stopped: the code ran longer than 10 s .*Python was restarted/);
  assert.ok(took < RUN_LIMIT_S + 10, `stopped after ${took} s`);

  // The restarted Python comes from the snapshot made before the first snippet ran: without its change.
  await replaceCode(page, snippet, 'import explainers\nhasattr(explainers, "left_by_a_reader")  # → False');
  await runAndWait(snippet);
  assert.equal(await snippet.locator('.snippet-value').first().textContent(), 'False');
  assert.equal((await runtimeTimings(page)).worker.snapshot, 'restored');

  await replaceCode(page, snippet, 'n = 100\nratio = n / 0\nratio  # → 1');
  assert.equal(await runAndWait(snippet), 'Python error on line 2: ZeroDivisionError: division by zero');
  await snippet.getByRole('button', { name: 'Reset' }).click();
  assert.match(await runAndWait(snippet), /^Same as the page/, 'the fresh worker runs the snippet');
  assert.deepEqual(problems, []);
  await context.close();
});

test('dark mode at 320 px: the editor fits and passes axe; without JavaScript the snippet is text', { timeout: 300000 }, async () => {
  const { context, page, problems } = await reader({ viewport: { width: 320, height: 700 }, colorScheme: 'dark', hasTouch: true, isMobile: true });
  await page.goto(`${BASE_URL}/scoring-lesson/`);
  const snippet = page.locator('.snippet').first();
  // On a phone a snippet waits in its fold ("Show the math", "Show it in Python"): the reader opens it.
  await snippet.locator('xpath=ancestor::details[contains(@class, "phone-fold")]').locator(':scope > summary').tap();
  await snippet.getByRole('button', { name: 'Edit and run' }).tap();
  await snippet.locator('.cm-content').waitFor();
  await runAndWait(snippet);
  await snippet.scrollIntoViewIfNeeded();
  assert.equal(await snippet.locator('.snippet-hint').isVisible(), false, 'a phone is told of Ctrl+Enter, which it has not');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 320), 'no sideways scroll at 320 px');
  const colours = await snippet.locator('.cm-editor').evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.equal(colours, 'rgb(28, 31, 35)', 'the editor takes the dark code background');
  assert.deepEqual(await axeViolations(page, { within: snippet }), []);
  await screenshot(page, 'snippet-dark-320');
  assert.deepEqual(problems, []);
  await context.close();

  const plain = await reader({ javaScriptEnabled: false });
  await plain.page.goto(`${BASE_URL}/mmlu/`);
  assert.equal(await plain.page.locator('.snippet-edit').count(), 0);
  assert.match(await plain.page.locator('.snippet pre code').first().textContent(), /round\(SE, 4\)  # → 0\.0433/);
  await plain.context.close();
});
