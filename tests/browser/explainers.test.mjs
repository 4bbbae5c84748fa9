// The math core in headless Chromium: Pyodide loads in a worker under our CSP, the /math-core page
// fills its browser column, and on a grid of inputs for every public function the browser's
// results equal the server's (Python's math.isclose), and bad input gets the same message.
// A second visit must start from the worker's Pyodide memory snapshot and still agree, also when the
// first reader left half a second after the page was ready.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, axeViolations, launch, runtimeTimings, watchConsole, screenshot } from './lib.mjs';

// A small seeded generator, so the grid is the same on every run.
function rng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const product = (...lists) => lists.reduce((acc, list) => acc.flatMap((a) => list.map((b) => [...a, b])), [[]]);

function grid() {
  const calls = [];
  const add = (fn, args) => calls.push({ fn, args });
  const ps = [0, 0.1, 0.25, 0.439, 0.5, 0.85, 1];
  const ns = [1, 10, 100, 14079];
  for (const q of [0.001, 0.025, 0.3, 0.5, 0.975, 0.999]) add('normal_quantile', { q });
  for (const [p, n] of product(ps, ns)) add('standard_error', { p, n });
  for (const [p, n, level] of product(ps, ns, [0.9, 0.95, 0.99])) add('margin_of_error', { p, n, level });
  for (const [p, n, method] of product(ps, ns, ['normal', 'wilson'])) add('confidence_interval', { p, n, method });
  for (const [n, options, method] of product([1, 10, 100, 1000], [2, 4, 10], ['normal', 'exact'])) {
    add('chance_band', { n, options, method });
  }
  for (const [k, n, p] of product([0, 5, 25], [30, 100], [0.25, 0.5])) add('binomial_cdf', { k, n, p });
  for (const [score, n] of product([0.1, 0.2, 0.3, 0.35], [100, 1000])) add('is_distinguishable_from_chance', { score, n });

  const random = rng(2020);
  const letters = ['A', 'B', 'C', 'D'];
  const pick = () => letters[Math.floor(random() * 4)];
  for (let i = 0; i < 5; i += 1) {
    add('predict', { letter_probs: Object.fromEntries(letters.map((l) => [l, random()])) });
    add('softmax', { logits: letters.map(() => 20 * random() - 10) });
    add('top_two', { letter_probs: Object.fromEntries(letters.map((l) => [l, random()])) });
    const predictions = Array.from({ length: 40 }, pick);
    const keys = Array.from({ length: 40 }, pick);
    const subjects = Array.from({ length: 40 }, () => ['law', 'virology', 'algebra'][Math.floor(random() * 3)]);
    add('accuracy', { predictions, keys });
    add('subject_accuracies', { predictions, keys, subjects });
    add('group_accuracies', {
      subject_results: { law: { n: 30, accuracy: random() }, virology: { n: 12, accuracy: random() }, algebra: { n: 50, accuracy: random() } },
      subject_groups: { law: 'humanities', virology: 'other', algebra: 'stem' },
    });
    const counts = Array.from({ length: 4 }, () => 1 + Math.floor(random() * 500));
    const accuracies = counts.map(() => random());
    add('weighted_accuracy', { counts, accuracies });
    add('plain_mean', { values: accuracies });

    const confidences = Array.from({ length: 60 }, () => 0.25 + 0.75 * random());
    const correct = confidences.map((c) => (random() < c - 0.1 ? 1 : 0));
    add('average_confidence', { confidences });
    add('calibration_gap', { confidences, correct });
    for (const [bins, binning] of product([1, 2, 5, 10], ['equal_count', 'fixed_width'])) {
      add('calibration_bins', { confidences, correct, bins, binning });
      add('rms_calibration_error', { confidences, correct, bins, binning });
    }
    add('confidence_accuracy_correlation', { confidences: confidences.slice(0, 57), accuracies: Array.from({ length: 57 }, () => random()) });

    const clusters = Array.from({ length: 200 }, (_, j) => `subject_${j % 7}`);
    const baseline = clusters.map(() => (random() < 0.6 ? 1 : 0));
    const candidate = baseline.map((b) => (random() < 0.1 ? 1 - b : b));
    add('paired_delta', { candidate, baseline });
    add('paired_standard_error', { candidate, baseline });
    add('independent_standard_error', { candidate, baseline });
    add('clustered_standard_error', { candidate, baseline, clusters, correction: i % 2 ? 'CR1' : 'CR0' });
    add('student_t_cdf', { x: 6 * random() - 3, df: 1 + i * 7 });
    add('student_t_quantile', { q: 0.01 + 0.98 * random(), df: 1 + i * 7 });
    add('subject_deltas', { candidate, baseline, clusters });
    add('gate_verdict', { candidate, baseline, clusters, multiple: 1 + random() });

    const tokens = (k) => Array.from({ length: k }, () => -3 * random());
    add('option_logprob', { token_logprobs: tokens(1 + i), normalize: i % 2 ? 'per_token' : 'none' });
    add('pick_option', { options: Object.fromEntries(letters.map((l, j) => [l, tokens(1 + j)])), normalize: i % 2 ? 'none' : 'per_token' });
    add('expected_score', { known: random(), options: 2 + i });
    add('simulate_contamination', { accuracy: random(), leaked_fraction: random() / 2, questions: 500 + 100 * i, seed: i });
  }
  add('ngram_overlap', { text: 'How many chromosomes do all human somatic cells contain?', reference: 'Q: how many chromosomes do all human cells contain', n: 3 });
  add('ngram_overlap', { text: 'the quick brown fox jumps', reference: 'a quick brown fox', n: 2 });
  return calls;
}

const BAD_CALLS = [
  { fn: 'standard_error', args: { p: 1.5, n: 100 } },
  { fn: 'standard_error', args: { p: 0.2 } },
  { fn: 'confidence_interval', args: { p: 0.2, n: 10, method: 'magic' } },
  { fn: 'accuracy', args: { predictions: ['A'], keys: ['A', 'B'] } },
  { fn: 'rms_calibration_error', args: { confidences: [0.5], correct: [1], bins: 3 } },
  { fn: 'clustered_standard_error', args: { candidate: [1, 0], baseline: [0, 0], clusters: ['a', 'a'] } },
  { fn: 'chance_band', args: { n: 10, surprise: true } },
];

// Python's math.isclose (rel_tol 1e-9), through lists and objects.
function assertClose(actual, expected, where) {
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', where);
    const tol = Math.max(1e-9 * Math.max(Math.abs(actual), Math.abs(expected)), 0);
    assert.ok(Math.abs(actual - expected) <= tol, `${where}: browser ${actual} vs server ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${where}: list shape`);
    expected.forEach((e, i) => assertClose(actual[i], e, `${where}[${i}]`));
  } else if (expected && typeof expected === 'object') {
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${where}: keys`);
    for (const key of Object.keys(expected)) assertClose(actual[key], expected[key], `${where}.${key}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

async function onServer({ fn, args }) {
  const response = await fetch(`${BASE_URL}/api/explainers/${fn}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(args),
  });
  return { status: response.status, body: await response.json() };
}

let browser;
let page;
let problems;

before(async () => {
  browser = await launch();
  page = await (await browser.newContext()).newPage();
  problems = watchConsole(page);
  await page.goto(`${BASE_URL}/math-core`);
  await page.waitForSelector('html[data-math-core]', { timeout: 90_000 });
});

after(async () => {
  await browser?.close();
});

test('the /math-core page computes every example in the browser, matching the server', async () => {
  assert.equal(await page.getAttribute('html', 'data-math-core'), 'match', await page.textContent('#math-core-status'));
  const verdicts = await page.$$eval('[data-browser]', (cells) => cells.map((c) => c.textContent));
  assert.ok(verdicts.length >= 15);
  for (const v of verdicts) assert.match(v, /same as server$/);
  assert.match(await page.textContent('#math-core-status'), /match the server/);
  await screenshot(page, 'math-core');
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('browser results equal server results on a grid of inputs for every public function', async () => {
  const calls = grid();
  const index = await (await fetch(`${BASE_URL}/api/explainers`)).json();
  const covered = new Set(calls.map((c) => c.fn));
  for (const fn of Object.keys(index.functions)) {
    assert.ok(covered.has(fn), `the grid has no input for ${fn}`);
  }
  const inBrowser = await page.evaluate(async (batch) => {
    const { explainers } = await import('/static/js/python-runtime.js');
    await explainers.ready;
    return explainers.batch(batch);
  }, calls);
  assert.equal(inBrowser.length, calls.length);
  for (let i = 0; i < calls.length; i += 1) {
    const server = await onServer(calls[i]);
    assert.equal(server.status, 200, `${calls[i].fn}: ${JSON.stringify(server.body)}`);
    assertClose(inBrowser[i], server.body.result, `${calls[i].fn}(${JSON.stringify(calls[i].args).slice(0, 80)})`);
  }
  assert.deepEqual(problems, []);
});

test('bad input gets the same message in the browser as the API gives with its 400', async () => {
  const messages = await page.evaluate(async (bad) => {
    const { explainers } = await import('/static/js/python-runtime.js');
    return Promise.all(bad.map(({ fn, args }) => explainers.call(fn, args).then(
      () => null,
      (error) => ({ name: error.name, message: error.message, fn: error.fn }),
    )));
  }, BAD_CALLS);
  for (let i = 0; i < BAD_CALLS.length; i += 1) {
    const server = await onServer(BAD_CALLS[i]);
    assert.equal(server.status, 400);
    assert.deepEqual(messages[i], { name: 'ExplainerError', message: server.body.error, fn: BAD_CALLS[i].fn });
  }
  const unknown = await page.evaluate(async () => {
    const { explainers } = await import('/static/js/python-runtime.js');
    return explainers.call('__import__', { name: 'os' }).catch((error) => error.kind);
  });
  assert.equal(unknown, 'UnknownFunction');
  assert.deepEqual(problems, []);
});

test('a second visit starts from the memory snapshot and still matches the server', async () => {
  // The first page stores the snapshot just after it is ready; wait until it is in Cache Storage
  // (polled in the page: waitForFunction would take the async check's Promise as a yes at once).
  await page.evaluate(async () => {
    const cache = await caches.open('explainers-pyodide-snapshot');
    for (const started = performance.now(); (await cache.keys()).length !== 1; await new Promise((r) => setTimeout(r, 50))) {
      if (performance.now() - started > 60_000) throw new Error('no snapshot in Cache Storage within 60 s');
    }
  });
  const second = await page.context().newPage();
  const secondProblems = watchConsole(second);
  await second.goto(`${BASE_URL}/math-core`);
  await second.waitForSelector('html[data-math-core]', { timeout: 90_000 });
  assert.equal(await second.getAttribute('html', 'data-math-core'), 'match');
  const { worker } = await runtimeTimings(second);
  assert.equal(worker.snapshot, 'restored', JSON.stringify(worker));
  assert.deepEqual(secondProblems, []);
  await second.close();
});

test('a reader who leaves half a second after ready still leaves the snapshot for the next visit', async () => {
  // A fresh profile each time: its first visit starts Pyodide the ordinary way.
  const context = await browser.newContext();
  const first = await context.newPage();
  const firstProblems = watchConsole(first);
  await first.goto(`${BASE_URL}/mmlu/widgets/chance-explorer`);
  await first.waitForSelector('section.widget[data-worker="ready"]', { timeout: 120_000 });
  // Wait on the page's own clock until half a second after ready, then close it at once.
  const saved = await first.evaluate(async () => {
    const { explainers } = await import('/static/js/python-runtime.js');
    const wait = explainers.timings.ready_ms + 500 - performance.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
    return { ...structuredClone(explainers.timings), left_ms: performance.now() };
  });
  await first.close(); // the worker ends with the page
  assert.equal(saved.worker.snapshot, undefined, 'the first visit of a fresh profile starts without a snapshot');
  assert.deepEqual(firstProblems, []);
  // Made before the worker said ready, so from a Python that had run nothing of the page's.
  assert.ok(saved.snapshot?.made_ms < saved.ready_ms, JSON.stringify(saved));

  const second = await context.newPage();
  const started = Date.now();
  await second.goto(`${BASE_URL}/mmlu/widgets/chance-explorer`);
  await second.waitForSelector('section.widget[data-worker="ready"]', { timeout: 120_000 });
  const warm = await runtimeTimings(second);
  const after = (ms) => (ms === undefined ? 'not yet' : `${Math.round(ms - saved.ready_ms)} ms`);
  console.log(`worker start to ready: ${Math.round(saved.worker.ready_ms)} ms without the snapshot, `
    + `${Math.round(warm.worker.ready_ms)} ms from it; after the first ready: first result ${after(saved.first_result_ms)}, `
    + `snapshot made ${after(saved.snapshot?.made_ms)}, stored ${after(saved.snapshot?.stored_ms)}, page left at ${after(saved.left_ms)}; `
    + `second page ready ${Date.now() - started} ms after it was opened`);
  assert.equal(warm.worker.snapshot, 'restored', JSON.stringify(warm.worker));
  await context.close();
});

test('the page reads fully without JavaScript, and at 320 px in dark mode', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const plain = await context.newPage();
  await plain.goto(`${BASE_URL}/math-core`);
  const serverCells = await plain.$$eval('tbody td:nth-child(3) code', (cells) => cells.map((c) => c.textContent));
  assert.ok(serverCells.length >= 15 && serverCells.every((t) => t.length > 0));
  assert.ok(serverCells.includes('0.0433'));
  await context.close();

  // The filled-in table is the widest the page gets: check it on the already-loaded page.
  await page.setViewportSize({ width: 320, height: 720 });
  await page.emulateMedia({ colorScheme: 'dark' });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than a 320px screen`);
  await page.locator('.math-core-table tbody tr').first().scrollIntoViewIfNeeded();
  await screenshot(page, 'math-core-320-dark');
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});
