// How quickly does a widget redraw when a slider moves, and does dragging freeze the page?
//
//   node bench/widgets_redraw.mjs                      # starts `python3 app.py` on a free port
//   BASE_URL=http://127.0.0.1:8000 node bench/widgets_redraw.mjs
//
// For each widget below, in headless Chromium on this machine (hardware printed first):
//   - warm redraw: from a slider's input event to the redrawn SVG being painted (the next
//     animation frame after the worker's view is applied), median and 95th percentile;
//   - drag: the mouse drags the slider across its track in 60 steps, one per frame; prints the
//     longest main-thread task seen meanwhile (PerformanceObserver "longtask", 50 ms or more),
//     and how many redraws the drag produced (intermediate states are coalesced, never queued).
// No figure here is asserted anywhere; tests check behaviour, this script reports speed.
import os from 'node:os';
import { launch } from '../tests/browser/lib.mjs';
import { observeLongTasks, startServer } from './browser_bench.mjs';

const RUNS = 40;
const CASES = [
  { widget: 'chance-explorer', slider: '#w-chance-explorer-score-range' },
  { widget: 'calibration-bars', slider: '#w-calibration-bars-bins-range' },
  { widget: 'release-gate', slider: '#w-release-gate-delta-range' }, // simulates 14,042 questions per redraw
];

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// Move the slider one step at a time from the page itself and time input → painted redraw.
async function warmRedraws(page, widget, slider, runs) {
  return page.evaluate(async ([name, selector, n]) => {
    const el = document.querySelector(`section.widget[data-widget="${name}"]`);
    const range = document.querySelector(selector);
    const times = [];
    for (let i = 0; i < n; i += 1) {
      const done = new Promise((resolve) => el.addEventListener('widget:rendered', resolve, { once: true }));
      const steps = Math.round((Number(range.max) - Number(range.min)) / Number(range.step));
      range.value = String(Number(range.min) + ((i * 7) % steps + 1) * Number(range.step));
      const start = performance.now();
      range.dispatchEvent(new Event('input', { bubbles: true }));
      await done;
      await new Promise((resolve) => requestAnimationFrame(() => resolve()));
      times.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return times;
  }, [widget, slider, runs]);
}

async function drag(page, widget, slider) {
  await page.evaluate(() => { window.__longTasks.length = 0; });
  const before = Number(await page.getAttribute(`section.widget[data-widget="${widget}"]`, 'data-renders'));
  const box = await page.locator(slider).boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + 2, y);
  await page.mouse.down();
  for (let i = 0; i <= 60; i += 1) {
    await page.mouse.move(box.x + 2 + (i / 60) * (box.width - 4), y);
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  }
  await page.mouse.up();
  await page.waitForFunction((name) => !document.querySelector(`section.widget[data-widget="${name}"]`).hasAttribute('aria-busy'), widget);
  const after = Number(await page.getAttribute(`section.widget[data-widget="${widget}"]`, 'data-renders'));
  const longTasks = await page.evaluate(() => window.__longTasks.slice());
  return { redraws: after - before, longest: longTasks.length ? Math.max(...longTasks) : 0 };
}

const external = process.env.BASE_URL;
const server = external ? { base: external, child: null } : await startServer('/mmlu/widgets/');
const browser = await launch();
try {
  const version = browser.version();
  console.log(`hardware: ${os.cpus()[0].model}, ${os.cpus().length} cores; headless Chromium ${version}`);
  const context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
  await context.addInitScript(observeLongTasks);
  for (const { widget, slider } of CASES) {
    const page = await context.newPage();
    await page.goto(`${server.base}/mmlu/widgets/${widget}`);
    await page.waitForSelector(`section.widget[data-widget="${widget}"][data-worker="ready"]`, { timeout: 120_000 });
    await page.waitForFunction((name) => Number(document.querySelector(`section.widget[data-widget="${name}"]`).dataset.renders) > 0, widget);
    await warmRedraws(page, widget, slider, 5); // warm-up, not counted
    const times = (await warmRedraws(page, widget, slider, RUNS)).sort((a, b) => a - b);
    const dragged = await drag(page, widget, slider);
    console.log(`${widget}: input → painted redraw, warm, ${RUNS} runs: median ${quantile(times, 0.5).toFixed(1)} ms, `
      + `p95 ${quantile(times, 0.95).toFixed(1)} ms, max ${times[times.length - 1].toFixed(1)} ms`);
    console.log(`${widget}: 60-step drag: ${dragged.redraws} redraws; longest main-thread task `
      + `${dragged.longest ? `${dragged.longest.toFixed(0)} ms` : 'none of 50 ms or more'}`);
    await page.close();
  }
} finally {
  await browser.close();
  if (server.child) server.child.kill();
}
