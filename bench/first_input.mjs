// How soon does a reader's first change show in the chart: before Pyodide is ready (the server
// computes the view) and after (the worker computes it)?
//
//   node bench/first_input.mjs                      # starts `python3 app.py` on a free port
//   BASE_URL=http://127.0.0.1:8000 node bench/first_input.mjs
//
// Cold: a fresh browser context whose Pyodide WebAssembly is held back, so every answer comes
// from the server's widget JSON route; warm: the same page once the worker is ready. Each figure
// is the time from the input event to the redrawn chart ("widget:rendered"), median of RUNS,
// measured in one run on this machine (hardware printed first).
import os from 'node:os';
import { launch } from '../tests/browser/lib.mjs';
import { startServer } from './browser_bench.mjs';

const RUNS = 15;
const SLIDER = '#w-chance-explorer-score-range';

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timeInputs(page, runs) {
  return page.evaluate(async ([selector, n]) => {
    const el = document.querySelector('section.widget[data-widget="chance-explorer"]');
    const range = document.querySelector(selector);
    const times = [];
    for (let i = 0; i < n; i += 1) {
      const done = new Promise((resolve) => el.addEventListener('widget:rendered', resolve, { once: true }));
      range.value = String(20 + (i % 30)); // the score's slider is in percent: 20% to 49%
      const start = performance.now();
      range.dispatchEvent(new Event('input', { bubbles: true }));
      await done;
      await new Promise((resolve) => requestAnimationFrame(() => resolve()));
      times.push(performance.now() - start);
    }
    return times;
  }, [SLIDER, runs]);
}

const external = process.env.BASE_URL;
const server = external ? { base: external, child: null } : await startServer('/mmlu/widgets/');
const browser = await launch();
try {
  console.log(`hardware: ${os.cpus()[0].model}, ${os.cpus().length} cores; headless Chromium ${browser.version()}`);
  const context = await browser.newContext();
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await context.route(/pyodide\.asm\.wasm/, async (route) => { await held; await route.continue(); });
  const page = await context.newPage();
  await page.goto(`${server.base}/mmlu/widgets/chance-explorer`);
  await page.waitForSelector('section.widget[data-ready="true"]');
  const cold = median(await timeInputs(page, RUNS));
  release();
  await page.waitForSelector('section.widget[data-worker="ready"]', { timeout: 120_000 });
  await timeInputs(page, 3); // warm-up, not counted
  const warm = median(await timeInputs(page, RUNS));
  console.log(`first input → redrawn chart, chance explorer, median of ${RUNS}: `
    + `before Pyodide (server) ${cold.toFixed(1)} ms, after (worker) ${warm.toFixed(1)} ms; `
    + `server / worker = ${(cold / warm).toFixed(2)}`);
  await context.close();
} finally {
  await browser.close();
  if (server.child) server.child.kill();
}
