// Every widget in headless Chromium: operate it with the keyboard, and check that the redrawn SVG
// and text are exactly what the server renders for the same state, that the URL follows the
// state, that reopening the URL restores it, that axe-core finds nothing, and that the console
// stays clean. One page per widget (each page starts Pyodide once: the first the ordinary way, the
// others from the memory snapshot it left); widgets run two at a time.
import { test, before, after } from 'node:test';
import { gzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { axeViolations, launch, BASE_URL, runtimeTimings, snapshotStored, watchConsole, screenshot, ARTIFACTS as ARTIFACTS_DIR, summaryText } from './lib.mjs';
import { checkAgainstServer, idleRenders, redrawnForWidth, serverMatch, settle, tabTo, widgetOf } from './widget-helpers.mjs';

let browser;
let plain; // a context without JavaScript: what a reader without it (or a reopened link) sees
let shared; // one context for all widget pages, so Pyodide's files come from its HTTP cache
before(async () => {
  browser = await launch();
  plain = await browser.newContext({ javaScriptEnabled: false });
  shared = await browser.newContext({ viewport: { width: 900, height: 1100 }, permissions: ['clipboard-read', 'clipboard-write'] });
});
after(async () => { await browser.close(); });

// The first widget page's Python starts the ordinary way and leaves its memory snapshot; the later
// ones, opened once it is stored, start from it, as a reader's next pages do.
let firstSnapshot = null; // settles when it is stored

// Open a widget page, wait for the worker's first redraw, and return the page and its console.
async function open(name, query = '') {
  const drawnByWorker = name !== 'prompt-anatomy';
  const first = drawnByWorker && !firstSnapshot;
  let stored = () => {};
  if (first) firstSnapshot = new Promise((resolve) => { stored = resolve; });
  else if (drawnByWorker) await firstSnapshot;
  const page = await shared.newPage();
  const problems = watchConsole(page);
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`); });
  try {
    await page.goto(`${BASE_URL}/mmlu/widgets/${name}${query}`);
    await page.waitForSelector(`section.widget[data-widget="${name}"][data-ready="true"]`, { timeout: 90_000 });
    if (drawnByWorker) { // drawn by the worker: wait until it is ready and has redrawn once
      await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
      await settle(page, name, 0);
      if (first) {
        await snapshotStored(page);
      } else {
        assert.equal((await runtimeTimings(page)).worker.snapshot, 'restored', `${name}: Python from the snapshot`);
      }
    }
  } finally {
    stored();
  }
  return { page, problems };
}

// Reopen the page's URL without JavaScript: the server alone must show the same view.
async function reopenRestores(page, name) {
  const url = page.url();
  const live = await page.locator(`section.widget[data-widget="${name}"] .widget-summary`).evaluate(summaryText);
  const again = await plain.newPage();
  await again.goto(url);
  const restored = await again.locator('.widget-summary').evaluate(summaryText);
  await again.close();
  assert.equal(restored, live, `${name}: reopening ${url} does not restore the state`);
}

async function finish(t, { page, problems }, name) {
  await reopenRestores(page, name);
  assert.deepEqual(await axeViolations(page), [], `${name}: axe-core violations`);
  await screenshot(page, `widget-${name}`);
  // Narrow and dark: nothing may stick out sideways at 320 px; look at the screenshot.
  await page.setViewportSize({ width: 320, height: 900 });
  await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
  // Once the widget has redrawn for the width: until then a figure of the wider screen may stick out.
  await redrawnForWidth(page, name);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${name}: the page is ${overflow}px wider than a 320px screen`);
  await page.locator(`section.widget[data-widget="${name}"] svg.widget-figure`).scrollIntoViewIfNeeded();
  await screenshot(page, `widget-${name}-320-dark`);
  assert.deepEqual(problems, [], `${name}: console errors`);
  await page.close();
}

test('widgets', { concurrency: 2 }, async (t) => {
  await t.test('chance explorer: keyboard on sliders, number box and subject picker', async () => {
    const name = 'chance-explorer';
    const opened = await open(name, '?n=100&score=0.30');
    const { page } = opened;
    const widget = widgetOf(page, name);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /cannot be told apart/);

    let renders = await tabTo(page, '#w-chance-explorer-n');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('1000');
    await page.keyboard.press('Tab');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /can be told apart from guessing/);
    assert.doesNotMatch(await widget.locator('.widget-summary').evaluate(summaryText), /cannot/);

    renders = await tabTo(page, '#w-chance-explorer-score-range');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await checkAgainstServer(page, name, renders);
    // The box and its slider are in percent, "%" beside the box; the address keeps the share.
    assert.equal(await page.inputValue('#w-chance-explorer-score'), '31');
    assert.equal(await page.locator('#w-chance-explorer-score-unit').innerText(), '%');
    assert.equal(await page.getAttribute('#w-chance-explorer-score-range', 'aria-valuetext'), '31.0%');
    assert.match(page.url(), /score=0\.31(&|$)/);
    // A percent typed in the box draws what the same share in the address draws (checkAgainstServer
    // compares with the server's page for ?score=0.275).
    renders = await tabTo(page, '#w-chance-explorer-score');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('27.5');
    await page.keyboard.press('Tab');
    assert.match((await checkAgainstServer(page, name, renders)).query, /score=0\.275(&|$)/);
    assert.equal(await page.inputValue('#w-chance-explorer-score'), '27.5');
    assert.equal(await page.getAttribute('#w-chance-explorer-score-range', 'aria-valuetext'), '27.5%');
    // Without JavaScript the form sends the box in percent (score_percent) and the page it gets
    // back is the state of the share: its box says 27.5, its link ?score=0.275.
    const noScript = await plain.newPage();
    await noScript.goto(`${BASE_URL}/mmlu/widgets/chance-explorer?n=1000`);
    await noScript.fill('#w-chance-explorer-score', '27.5');
    await noScript.click('section.widget .widget-apply button');
    await noScript.waitForURL(/score_percent=27\.5/);
    assert.equal(await noScript.inputValue('#w-chance-explorer-score'), '27.5');
    assert.match(await noScript.inputValue('#w-chance-explorer-link'), /\?n=1000&score=0\.275$/);
    assert.match(await noScript.locator('.widget-summary').evaluate(summaryText), /^A score of 27\.5% on 1,000 questions/);
    await noScript.close();

    renders = await tabTo(page, '#w-chance-explorer-subject');
    await page.keyboard.press('ArrowDown'); // the first real subject: abstract algebra, 100 questions
    await checkAgainstServer(page, name, renders);
    assert.equal(await page.inputValue('#w-chance-explorer-n'), '100');
    assert.match(page.url(), /subject=abstract_algebra/);

    // The questions slider is logarithmic: from 100 to 1,000 is twenty key presses, not 900.
    renders = await idleRenders(widget);
    await page.focus('#w-chance-explorer-n-range');
    for (let i = 0; i < 20; i += 1) await page.keyboard.press('ArrowRight');
    await checkAgainstServer(page, name, renders);
    assert.equal(await page.inputValue('#w-chance-explorer-n'), '1000');
    assert.equal(await page.getAttribute('#w-chance-explorer-n-range', 'aria-valuetext'), '1000');
    assert.doesNotMatch(page.url(), /subject=/); // moving the number by hand lets go of the subject

    renders = await tabTo(page, '#w-chance-explorer-options');
    await page.keyboard.press('ArrowDown');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /chance rate of 10%/);

    renders = await idleRenders(widget);
    await page.fill('#w-chance-explorer-n', '50000');
    await page.keyboard.press('Tab');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-messages').innerText(), /between 1 and 20000/);
    assert.equal(await page.inputValue('#w-chance-explorer-n'), '20000');

    // Share / embed, by keyboard: the copied snippet frames exactly this state.
    await tabTo(page, 'section[data-widget="chance-explorer"] .widget-share > summary');
    await page.keyboard.press('Enter');
    await tabTo(page, '[data-copy="w-chance-explorer-iframe"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#w-chance-explorer .share-status').textContent !== '');
    const query = await widget.getAttribute('data-query');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(copied.startsWith(`<iframe src="${BASE_URL}/embed/mmlu/chance-explorer?${query.replace(/&/g, '&amp;')}"`), copied);
    assert.match(copied, /<script src="[^"]+\/static\/js\/embed-resize\.js" async><\/script>/);
    assert.equal(await page.inputValue('#w-chance-explorer-link'), page.url());
    await finish(t, opened, name);
  });

  await t.test('calibration bars: edit answers, bins, load pairs', async () => {
    const name = 'calibration-bars';
    const opened = await open(name);
    const { page } = opened;
    const widget = widgetOf(page, name);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /RMS calibration error over 2 confidence groups: 0\.212/);

    let renders = await tabTo(page, '#w-calibration-bars-bins-range');
    await page.keyboard.press('ArrowRight');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /over 3 confidence groups/);

    renders = await idleRenders(widget); // drag the slider with the mouse
    const track = await page.locator('#w-calibration-bars-bins-range').boundingBox();
    await page.mouse.move(track.x + 4, track.y + track.height / 2);
    await page.mouse.down();
    for (let i = 1; i <= 10; i += 1) await page.mouse.move(track.x + 4 + (i / 10) * track.width, track.y + track.height / 2);
    await page.mouse.up();
    await checkAgainstServer(page, name, renders);
    assert.equal(await page.inputValue('#w-calibration-bars-bins'), '10');
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /over 10 confidence groups/);

    renders = await tabTo(page, '#w-calibration-bars-correct-4');
    await page.keyboard.press('ArrowUp'); // wrong → right
    await checkAgainstServer(page, name, renders);
    assert.match(page.url(), /correct=1,1,1,1,0/);

    renders = await tabTo(page, '[data-action="add-answer"]');
    await page.keyboard.press('Enter');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /^11 answers/);

    renders = await idleRenders(widget);
    await page.fill('#w-calibration-bars-pairs', '0.9, 1\n0.8, 0\n0.3, 0\n0.6, 1');
    await page.click('[data-action="load-pairs"]');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /^4 answers/);
    assert.equal(await widget.locator('.answer-row').count(), 4);

    // A results file from `python -m engine mmlu evaluate` (its JSONL fields, as the README lists them).
    renders = await idleRenders(widget);
    await page.setInputFiles('#w-calibration-bars-file', { name: 'run.jsonl', mimeType: 'application/json',
      buffer: Buffer.from(evaluateRows('astronomy', [[0.91, true], [0.85, false], [0.4, true]]).join('\n')) });
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /^3 answers/);
    assert.match(page.url(), /conf=0\.91,0\.85,0\.4/);
    assert.match(page.url(), /correct=1,0,1/);
    await finish(t, opened, name);
  });

  await t.test('scaling plot: toggle a series, focus a point', async () => {
    const name = 'scaling-plot';
    const opened = await open(name);
    const { page } = opened;
    const widget = widgetOf(page, name);
    const renders = await tabTo(page, 'input[name="show"][value="unifiedqa"]');
    await page.keyboard.press('Space');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /UnifiedQA \(transfer\): hidden/);
    assert.equal(await widget.locator('.series-unifiedqa.fig-point').count(), 0);
    await tabTo(page, '.fig-point'); // past the other series' boxes: the first point of the plot
    const focused = await page.evaluate(() => document.activeElement.getAttribute('aria-label'));
    assert.match(focused || '', /GPT-3 few-shot, 2\.7B parameters: 25\.9%/);
    await finish(t, opened, name);
  });

  await t.test('group bars: confidence level and band type', async () => {
    const name = 'group-bars';
    const opened = await open(name);
    const { page } = opened;
    const renders = await tabTo(page, '#w-group-bars-level');
    await page.keyboard.press('ArrowDown');
    await checkAgainstServer(page, name, renders);
    assert.match(page.url(), /level=0\.99/);
    assert.match(await widgetOf(page, name).locator('.widget-summary').evaluate(summaryText), /Micro average.*macro average/s);
    await finish(t, opened, name);
  });

  await t.test('subject bars: Wilson band', async () => {
    const name = 'subject-bars';
    const opened = await open(name);
    const { page } = opened;
    const renders = await tabTo(page, '#w-subject-bars-band');
    await page.keyboard.press('ArrowDown');
    await checkAgainstServer(page, name, renders);
    assert.match(page.url(), /band=wilson/);
    await finish(t, opened, name);
  });

  await t.test('prompt anatomy: shots and subject change the exact prompt', async () => {
    const name = 'prompt-anatomy';
    const opened = await open(name);
    const { page } = opened;
    const widget = widgetOf(page, name);
    let renders = await tabTo(page, '#w-prompt-anatomy-shots-range');
    await page.keyboard.press('ArrowRight');
    await checkAgainstServer(page, name, renders);
    assert.equal(await widget.locator('.prompt-text .part-shot').count(), 2);
    renders = await tabTo(page, '#w-prompt-anatomy-subject');
    await page.keyboard.press('Home');
    await checkAgainstServer(page, name, renders);
    assert.match(await widget.locator('.prompt-text .part-header').innerText(), /about abstract algebra\./);
    const match = await serverMatch(page, name);
    assert.equal(match.livePrompt, match.serverPrompt);
    // Keyboard users reach each part; its legend entry is its description (what the mouse's title says).
    await page.keyboard.press('Tab');
    let focused = null;
    for (let i = 0; i < 40 && !focused; i += 1) {
      focused = await page.evaluate(() => (document.activeElement.classList.contains('part-header')
        ? document.getElementById(document.activeElement.getAttribute('aria-describedby'))?.textContent : null));
      if (!focused) await page.keyboard.press('Tab');
    }
    assert.match(focused ?? '', /^\s*Header\./);
    await finish(t, opened, name);
  });

  await t.test('release gate: drag the delta, load results', async () => {
    const name = 'release-gate';
    const opened = await open(name, '?delta=0');
    const { page } = opened;
    const widget = widgetOf(page, name);
    let renders = await tabTo(page, '#w-release-gate-delta-range');
    await page.keyboard.press('End');
    assert.match((await checkAgainstServer(page, name, renders)).query, /delta=0\.05(&|$)/);
    assert.equal(await page.inputValue('#w-release-gate-delta'), '5'); // the change in percentage points, "points" beside it
    assert.equal(await page.locator('#w-release-gate-delta-unit').innerText(), 'points');
    assert.equal(await page.getAttribute('#w-release-gate-delta-range', 'aria-valuetext'), '5.0 points');
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /^Verdict: investigate/);
    renders = await tabTo(page, '#w-release-gate-corr-range');
    await page.keyboard.press('Home');
    await checkAgainstServer(page, name, renders);

    renders = await idleRenders(widget);
    const lines = [];
    for (let i = 0; i < 40; i += 1) lines.push(`${i % 2 ? 'anatomy' : 'virology'}, ${i % 3 ? 1 : 0}, ${i % 4 ? 1 : 0}`);
    await widget.locator('details.widget-data > summary').click(); // "Bring your own two runs"
    await page.fill('#w-release-gate-results', lines.join('\n'));
    await page.click('[data-action="load-results"]');
    await settle(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /Your pasted results \(40 questions\)/);
    assert.equal(await widget.locator('.fig-bar-up, .fig-bar-down').count(), 2);
    // Two runs of `python -m engine mmlu evaluate`, paired question by question.
    renders = await idleRenders(widget);
    const production = [...evaluateRows('virology', [[0.5, true], [0.6, true], [0.7, false], [0.8, true]]),
      ...evaluateRows('anatomy', [[0.5, true], [0.6, false]])];
    const candidate = [...evaluateRows('virology', [[0.5, false], [0.6, true], [0.7, false]]), // one question fewer
      ...evaluateRows('anatomy', [[0.5, true], [0.6, true]])];
    await page.setInputFiles('#w-release-gate-production', { name: 'prod.jsonl', mimeType: 'application/json', buffer: Buffer.from(production.join('\n')) });
    await page.setInputFiles('#w-release-gate-candidate', { name: 'cand.jsonl', mimeType: 'application/json', buffer: Buffer.from(candidate.join('\n')) });
    await page.click('[data-action="compare-runs"]');
    await settle(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /Your files: production prod\.jsonl against candidate cand\.jsonl\.[\s\S]*5 paired questions in 2 subjects/);
    // The same runs gzipped, as the site publishes its own: unzipped in the page, the same report.
    renders = await idleRenders(widget);
    await page.setInputFiles('#w-release-gate-production', { name: 'prod.jsonl.gz', mimeType: 'application/gzip', buffer: gzipSync(production.join('\n')) });
    await page.setInputFiles('#w-release-gate-candidate', { name: 'cand.jsonl.gz', mimeType: 'application/gzip', buffer: gzipSync(candidate.join('\n')) });
    await page.click('[data-action="compare-runs"]');
    await settle(page, name, renders);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /Your files: production prod\.jsonl against candidate cand\.jsonl\.[\s\S]*5 paired questions in 2 subjects/);
    // A file named .gz that is not gzip: said beside the inputs, nothing redrawn.
    await page.setInputFiles('#w-release-gate-candidate', { name: 'cand.jsonl.gz', mimeType: 'application/gzip', buffer: Buffer.from('not gzip') });
    await page.click('[data-action="compare-runs"]');
    await widget.locator('[data-role="load-error"][data-from="files"]').waitFor({ state: 'visible' });
    assert.match(await widget.locator('[data-role="load-error"][data-from="files"]').innerText(), /cand\.jsonl\.gz is not a gzip file/);

    renders = await idleRenders(widget);
    await page.click('[data-action="clear-results"]');
    await checkAgainstServer(page, name, renders);
    await finish(t, opened, name);
  });
});

// Lines shaped like the JSONL `python -m engine mmlu evaluate` writes, for one subject.
function evaluateRows(subject, answers) {
  return answers.map(([confidence, correct], index) => JSON.stringify({
    subject, split: 'test', index, method: 'letter', shots: 5,
    probabilities: { A: confidence, B: (1 - confidence) / 3, C: (1 - confidence) / 3, D: (1 - confidence) / 3 },
    prediction: 'A', key: correct ? 'A' : 'B', correct, confidence, vocabulary_share: 0.4, model: 'test rows',
  }));
}

test('inline on the annotated paper: no Pyodide before a touch, then the server answers and one worker takes over', async () => {
  const context = await browser.newContext({ viewport: { width: 900, height: 1100 } }); // no snapshot stored yet
  const page = await context.newPage();
  const problems = watchConsole(page);
  const runtime = []; // every request for Pyodide, a wheel or the runtime's manifest
  const watch = (r) => { if (/\/pyodide\/|\/wheels\/|\/api\/python-runtime/.test(r.url())) runtime.push(r.url()); };
  page.on('request', watch);
  page.on('worker', (worker) => runtime.push(`worker ${worker.url()}`));
  await page.goto(`${BASE_URL}/mmlu/`);
  const names = await page.$$eval('section.widget[data-driver="worker"]', (els) => els.map((e) => e.dataset.widget));
  assert.ok(names.length >= 6, `only ${names.length} worker widgets on the paper page`);
  for (const name of names) await settle(page, name, 0); // each drawn for its width, by the server
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight / 2));
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(500);
  assert.deepEqual(runtime, [], 'a reader who has not touched a widget downloads no Pyodide');
  // (The site's offline copy, static/js/service-worker.js, is saved in caches of its own.)
  assert.deepEqual(await page.evaluate(async () => (await caches.keys()).filter((name) => !name.startsWith('papers-offline-'))), [],
    'and stores no snapshot');
  assert.equal(await page.locator('section.widget[data-worker]').count(), 0);

  const before = page.url();
  const widget = widgetOf(page, 'chance-explorer');
  let renders = await idleRenders(widget);
  await page.fill('#w-chance-explorer-n', '1000'); // the first touch: the server answers at once
  await page.keyboard.press('Tab');
  await settle(page, 'chance-explorer', renders);
  assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /can be told apart from guessing/);
  // The worker starts on that touch and fetches Pyodide on its own time: wait for the request.
  for (let waited = 0; !runtime.some((url) => /\/pyodide\//.test(url)) && waited < 60_000; waited += 100) {
    await page.waitForTimeout(100);
  }
  assert.ok(runtime.some((url) => /\/pyodide\//.test(url)), 'the touch started the worker');
  await page.waitForSelector('section.widget[data-widget="chance-explorer"][data-worker="ready"]', { timeout: 90_000 });
  await page.waitForFunction(() => !document.querySelector('section.widget[data-widget="chance-explorer"]').hasAttribute('aria-busy'));
  renders = await idleRenders(widget);
  await page.fill('#w-chance-explorer-score', '27'); // now answered by the worker (the box is in percent)
  await settle(page, 'chance-explorer', renders);
  const match = await serverMatch(page, 'chance-explorer');
  assert.equal(match.liveMarks, match.serverMarks);
  assert.deepEqual(match.liveSummary, match.serverSummary);
  assert.equal(page.url(), before, 'an inline widget must not take over the page URL');
  assert.match(await page.locator('#w-chance-explorer-link').inputValue(), /\/mmlu\/widgets\/chance-explorer\?(?=.*n=1000)(?=.*score=0\.27)/);
  assert.equal(runtime.filter((url) => url.startsWith('worker ')).length, 1, 'one worker for the whole page');
  assert.deepEqual(problems, []);
  await context.close();
});

test('when the in-page calculator cannot start, the server computes each change', async () => {
  const context = await browser.newContext();
  await context.route(/\/pyodide\//, (route) => route.abort()); // as if WebAssembly were unavailable
  const page = await context.newPage();
  await page.goto(`${BASE_URL}/mmlu/widgets/chance-explorer`);
  await page.waitForSelector('section.widget[data-worker="failed"]', { timeout: 60_000 });
  assert.match(await page.locator('[data-role="engine"]').innerText(), /computed by the server/);
  await page.fill('#w-chance-explorer-n', '1000');
  await page.keyboard.press('Tab');
  await settle(page, 'chance-explorer', 0);
  const match = await serverMatch(page, 'chance-explorer');
  assert.equal(match.liveMarks, match.serverMarks);
  assert.match(match.liveSummary.join(' '), /can be told apart from guessing/);
  assert.match(page.url(), /n=1000/);
  await context.close();
});

test('an input made before the in-page calculator is ready is answered by the server at once', async () => {
  // A reader's next page (Python starts from the snapshot the widget pages left), whose worker's
  // messages reach the page only when the test lets them: until then the page cannot know it is
  // ready. (Holding the worker's own download of Pyodide with page.route is not reliable:
  // Chromium's interception of a dedicated worker's requests now and then lets one through.)
  const page = await shared.newPage();
  await page.addInitScript(() => {
    const held = [];
    let open = false;
    window.releaseWorkerMessages = () => { open = true; for (const deliver of held.splice(0)) deliver(); };
    window.Worker = class extends window.Worker {
      addEventListener(type, listener, options) {
        if (type !== 'message') return super.addEventListener(type, listener, options);
        return super.addEventListener(type, (event) => {
          if (open) listener.call(this, event);
          else held.push(() => listener.call(this, event));
        }, options);
      }
    };
  });
  await page.goto(`${BASE_URL}/mmlu/widgets/chance-explorer`);
  await page.waitForSelector('section.widget[data-ready="true"]', { timeout: 60_000 });
  await page.fill('#w-chance-explorer-n', '1000');
  await page.fill('#w-chance-explorer-score', '60');
  await page.waitForFunction(() => /60\.0%/.test(document.querySelector('.widget-summary').textContent), null, { timeout: 10_000 });
  assert.equal(await page.getAttribute('section.widget', 'data-worker'), null, 'the worker was not ready yet');
  let match = await serverMatch(page, 'chance-explorer');
  assert.equal(match.liveMarks, match.serverMarks);
  assert.match(match.query, /n=1000/);
  await page.evaluate(() => window.releaseWorkerMessages());
  await page.waitForSelector('section.widget[data-worker="ready"]', { timeout: 90_000 });
  await settle(page, 'chance-explorer', 0);
  match = await serverMatch(page, 'chance-explorer'); // the switch to the worker changes nothing visible
  assert.equal(match.liveMarks, match.serverMarks);
  assert.deepEqual(match.liveSummary, match.serverSummary);
  assert.equal((await runtimeTimings(page)).worker.snapshot, 'restored');
  await page.close();
});

test('printed: a figure drawn wide prints a copy drawn for the column (text at least 8 pt), never split; links print their addresses', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route(/\/pyodide\//, (route) => route.abort()); // the server draws every picture
  const page = await context.newPage();
  await page.goto(`${BASE_URL}/mmlu/`);
  const wide = await page.$$eval('section.widget[data-driver="worker"]', (els) => els.map((e) => e.dataset.widget));
  for (const name of wide) await settle(page, name, 0);
  await page.waitForFunction(() => [...document.querySelectorAll('svg.widget-figure[data-role="figure"]')]
    .every((svg) => svg.viewBox.baseVal.width <= 640 || svg.dataset.printCopy), null, { timeout: 30_000 });
  await page.emulateMedia({ media: 'print' });
  const printed = await page.evaluate(() => {
    const COLUMN = 673; // A4 less 16 mm margins, in CSS px: the printed figure's widest
    return [...document.querySelectorAll('section.widget svg.widget-figure')].filter((svg) => getComputedStyle(svg).display !== 'none')
      .map((svg) => {
        const scale = Math.min(COLUMN, svg.viewBox.baseVal.width) / svg.viewBox.baseVal.width;
        const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale * 0.75);
        return { widget: svg.closest('section.widget').dataset.widget, drawn: svg.viewBox.baseVal.width,
          smallest: Math.min(...sizes), unbroken: getComputedStyle(svg).breakInside === 'avoid' };
      });
  });
  assert.ok(printed.length >= 6);
  for (const figure of printed) {
    assert.ok(figure.smallest >= 8, `${figure.widget} prints its text at ${figure.smallest.toFixed(1)} pt (drawn ${figure.drawn} px wide)`);
    assert.ok(figure.unbroken, `${figure.widget} may be split across pages`);
  }
  const source = await page.$eval('.source-list a[href^="http"]', (a) => getComputedStyle(a, '::after').content);
  assert.match(source, /\(https?:/, 'a source prints its address');
  const glossary = await page.$eval('.glossary-entries', (dl) => [getComputedStyle(dl).columnCount, parseFloat(getComputedStyle(dl).fontSize)]);
  assert.equal(glossary[0], '2', 'the glossary prints in two columns');
  assert.ok(glossary[1] < 12, 'in small type');
  await page.pdf({ path: `${ARTIFACTS_DIR}/mmlu-printed-1280.pdf`, format: 'A4' });
  await context.close();
});
