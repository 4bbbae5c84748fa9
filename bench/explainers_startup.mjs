// How fast does the math core start in the browser, and what does a call cost?
//
//   node bench/explainers_startup.mjs                    # starts `python3 app.py` on a free port
//   BASE_URL=http://127.0.0.1:8000 node bench/explainers_startup.mjs
//
// Prints, for headless Chromium on this machine (hardware printed first):
//   - cold start: a fresh browser profile opens /math-core; time from navigation to the worker being
//     ready and to the first browser-computed result, with the worker's own breakdown;
//   - warm start: the same page again in the same profile (HTTP cache, compiled wasm and the
//     worker's Pyodide memory snapshot in Cache Storage reused);
//   - per-call latency: one call per round trip against one batch of many;
//   - the longest main-thread task during start-up (the page must not freeze);
//   - Pyodide's memory snapshot under Node: its size, and start-up from it against a plain start.
// No figure here is asserted anywhere; tests check behaviour, this script reports speed.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, snapshotStored } from '../tests/browser/lib.mjs';
import { observeLongTasks, repo, startServer } from './browser_bench.mjs';

const CALLS = 200;

async function openAndMeasure(context, base) {
  const page = await context.newPage();
  await page.goto(`${base}/math-core`);
  await page.waitForSelector('html[data-math-core]', { timeout: 120_000 });
  const figures = await page.evaluate(async () => {
    const { explainers } = await import('/static/js/python-runtime.js');
    return {
      outcome: document.documentElement.dataset.mathCore,
      created_ms: explainers.timings.created_ms,
      ready_ms: explainers.timings.ready_ms,
      first_result_ms: explainers.timings.first_result_ms,
      worker: explainers.timings.worker,
      long_tasks: window.__longTasks,
    };
  });
  return { page, figures };
}

async function callLatency(page, calls) {
  return page.evaluate(async (n) => {
    const { explainers } = await import('/static/js/python-runtime.js');
    const args = (i) => ({ p: (i % 99 + 1) / 100, n: 100 + i });
    let t = performance.now();
    for (let i = 0; i < n; i += 1) await explainers.call('standard_error', args(i));
    const oneByOne = (performance.now() - t) / n;
    t = performance.now();
    await explainers.batch(Array.from({ length: n }, (_, i) => ({ fn: 'standard_error', args: args(i) })));
    const batched = (performance.now() - t) / n;
    return { oneByOne, batched };
  }, calls);
}

async function snapshotUnderNode() {
  const { loadPyodide } = await import(path.join(repo, 'node_modules', 'pyodide', 'pyodide.mjs'));
  const indexURL = path.join(repo, 'node_modules', 'pyodide') + path.sep;
  const wheelPath = process.env.EXPLAINERS_WHEEL;
  const install = (py) => {
    const wheel = readFileSync(wheelPath);
    const site = py.runPython('import sysconfig; sysconfig.get_paths()["purelib"]');
    py.unpackArchive(new Uint8Array(wheel.buffer, wheel.byteOffset, wheel.byteLength), 'wheel', { extractDir: site });
    py.runPython('import explainers');
  };
  let t = performance.now();
  const plain = await loadPyodide({ indexURL });
  install(plain);
  const plainMs = performance.now() - t;

  const maker = await loadPyodide({ indexURL, _makeSnapshot: true });
  install(maker);
  const snapshot = maker.makeMemorySnapshot();
  t = performance.now();
  const restored = await loadPyodide({ indexURL, _loadSnapshot: snapshot });
  const value = restored.runPython('import explainers; explainers.standard_error(0.25, 100)');
  const restoredMs = performance.now() - t;
  return { plainMs, restoredMs, bytes: snapshot.byteLength, value };
}

const ms = (x) => (x === undefined ? 'n/a' : `${Math.round(x)} ms`);

async function main() {
  const cpu = os.cpus();
  console.log(`Hardware: ${cpu[0].model.trim()}, ${cpu.length} logical CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}`);
  const pyodideVersion = JSON.parse(readFileSync(path.join(repo, 'node_modules/pyodide/package.json'), 'utf8')).version;

  const server = process.env.BASE_URL ? { base: process.env.BASE_URL, child: null } : await startServer('/api/explainers');
  const browser = await launch();
  console.log(`Browser: Chromium ${browser.version()} (headless); Pyodide ${pyodideVersion}; Node ${process.version}`);
  try {
    const context = await browser.newContext();
    await context.addInitScript(observeLongTasks);
    const cold = await openAndMeasure(context, server.base);
    const f = cold.figures;
    console.log('\nCold start (fresh profile, empty cache), from navigation start:');
    console.log(`  worker created            ${ms(f.created_ms)}`);
    console.log(`  files fetched (in worker) ${ms(f.worker.fetched_ms)} after the worker started`);
    console.log(`  Pyodide loaded            ${ms(f.worker.pyodide_ms)} after the worker started`);
    console.log(`  explainers ready          ${ms(f.ready_ms)}`);
    console.log(`  first browser result      ${ms(f.first_result_ms)}   (page outcome: ${f.outcome})`);
    console.log(`  longest main-thread task  ${f.long_tasks.length ? ms(Math.max(...f.long_tasks)) : 'none of 50 ms or more'} (${f.long_tasks.length} long tasks)`);

    // The worker makes its memory snapshot just before `ready` and stores it after; wait until it is stored.
    await snapshotStored(cold.page).catch((error) => console.log(`  (no memory snapshot was stored: ${error.message})`));
    const saved = await cold.page.evaluate(async () => (await import('/static/js/python-runtime.js')).explainers.timings);
    const sinceReady = (x) => {
      if (x === undefined) return 'n/a';
      const d = Math.round(x - saved.ready_ms);
      return d < 0 ? `${-d} ms before ready` : `${d} ms after ready`;
    };
    console.log(`  memory snapshot           made ${sinceReady(saved.snapshot?.made_ms)}, stored ${sinceReady(saved.snapshot?.stored_ms)} (${((saved.snapshot?.bytes ?? 0) / 2 ** 20).toFixed(1)} MiB, uncompressed); first result ${sinceReady(saved.first_result_ms)}`);
    const latency = await callLatency(cold.page, CALLS);
    console.log(`\nPer call (standard_error, ${CALLS} calls): one per round trip ${latency.oneByOne.toFixed(3)} ms; in one batch ${latency.batched.toFixed(3)} ms (${(latency.oneByOne / latency.batched).toFixed(0)}x)`);

    const warm = await openAndMeasure(context, server.base);
    console.log('\nWarm start (same profile: HTTP cache, compiled code and memory snapshot reused):');
    console.log(`  memory snapshot           ${warm.figures.worker.snapshot ?? 'not used'}${warm.figures.worker.snapshot_error ? ` (${warm.figures.worker.snapshot_error})` : ''}`);
    console.log(`  explainers ready          ${ms(warm.figures.ready_ms)}`);
    console.log(`  first browser result      ${ms(warm.figures.first_result_ms)}`);
    console.log(`  longest main-thread task  ${warm.figures.long_tasks.length ? ms(Math.max(...warm.figures.long_tasks)) : 'none of 50 ms or more'}`);
    await context.close();
  } finally {
    await browser.close();
    server.child?.kill();
  }

  if (process.env.EXPLAINERS_WHEEL) {
    const snap = await snapshotUnderNode();
    console.log('\nPyodide memory snapshot (Node, experimental _makeSnapshot/_loadSnapshot API):');
    console.log(`  plain start + wheel       ${ms(snap.plainMs)}`);
    console.log(`  start from snapshot       ${ms(snap.restoredMs)} (snapshot ${(snap.bytes / 2 ** 20).toFixed(1)} MiB; result ${snap.value})`);
  } else {
    console.log('\n(Set EXPLAINERS_WHEEL=path/to/explainers-*.whl to also time Pyodide\'s memory snapshot; see bench/explainers_startup.sh.)');
  }
}

await main();
