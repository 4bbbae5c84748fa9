// The live model's published runs in the widgets, as a reader meets them: choose "this site's
// model" ("our model") with the keyboard in each widget that offers it, and the redrawn picture and text must be
// the server's for that state, name the live model, and carry its whole-test figures, which this
// test computes itself from the published files (benchmarks/mmlu/runs/*.jsonl.gz).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { axeViolations, launch, BASE_URL, watchConsole, screenshot, summaryText } from './lib.mjs';
import { checkAgainstServer, settle, tabTo, widgetOf } from './widget-helpers.mjs';

let browser;
let shared;
before(async () => {
  browser = await launch();
  shared = await browser.newContext({ viewport: { width: 1100, height: 1000 } });
});
after(async () => { await browser.close(); });

async function open(name) {
  const page = await shared.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/mmlu/widgets/${name}`);
  await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
  await settle(page, name, 0);
  return { page, problems };
}

// Focus a select by Tab and choose the option whose text matches `pattern`, by arrow keys only.
async function choose(page, selector, pattern) {
  let renders = await tabTo(page, selector);
  const { index, current } = await page.evaluate(([sel, source]) => {
    const el = document.querySelector(sel);
    return { index: [...el.options].findIndex((o) => new RegExp(source).test(o.textContent)), current: el.selectedIndex };
  }, [selector, pattern.source]);
  assert.ok(index >= 0, `${selector} has no option matching ${pattern}`);
  for (let i = current; i < index; i += 1) await page.keyboard.press('ArrowDown');
  return renders;
}

async function served(name, query) {
  const response = await fetch(`${BASE_URL}/api/widgets/mmlu/${name}?${query}`);
  assert.equal(response.status, 200);
  return response.json();
}

// The published rows of the run with `shots` worked examples, read here with Node's own gzip.
const RUNS = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'benchmarks', 'mmlu', 'runs');
function published(shots) {
  const file = fs.readdirSync(RUNS).find((f) => f.endsWith(`-${shots}shot.jsonl.gz`));
  assert.ok(file, `benchmarks/mmlu/runs/ publishes a ${shots}-shot run`);
  return zlib.gunzipSync(fs.readFileSync(path.join(RUNS, file))).toString('utf8').split('\n').filter(Boolean).map(JSON.parse);
}
const share = (rows) => rows.filter((r) => r.correct).length / rows.length;
const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// WCAG's contrast ratio of two CSS rgb() colours.
function contrast(a, b) {
  const luminance = (css) => {
    const [r, g, bl] = css.match(/\d+(\.\d+)?/g).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
const signed = (points) => `${points >= 0 ? '+' : '-'}${Math.abs(points).toFixed(2)}`;

// The two published runs, read here with Node's zlib: the figures the widgets must show.
const [ZERO, FIVE] = [published(0), published(5)];
const LAST = '5-shot'; // the last run a select offers

const CASES = [
  { name: 'release-gate', select: '#w-release-gate-source', option: /our runs/,
    expected: ([zero, five]) => [`paired delta ${signed(100 * (share(five) - share(zero)))} points`],
    about: /published runs .* over the whole MMLU test \(14,042 questions\): its 0-shot run \(production\) against its 5-shot run \(candidate\)/ },
  { name: 'calibration-bars', select: '#w-calibration-bars-source', option: new RegExp(LAST),
    expected: (runs) => [`accuracy ${share(runs.at(-1)).toFixed(2)}`],
    about: new RegExp(`SmolLM2-135M-Instruct, ${LAST}, on all 14,042 test questions`) },
  { name: 'group-bars', select: '#w-group-bars-models', option: /our model/,
    expected: (runs) => runs.map((run) => `its score over the whole test: ${(100 * share(run)).toFixed(1)}%`),
    about: /our own runs of the live model/ },
  { name: 'subject-bars', select: '#w-subject-bars-model', option: new RegExp(LAST),
    expected: (runs, view) => Object.keys(view.numbers).map((subject) => {
      const rows = runs.at(-1).filter((r) => r.subject === subject);
      return `${(100 * share(rows)).toFixed(1)}% on ${rows.length.toLocaleString('en-US')} test questions`;
    }),
    about: new RegExp(`SmolLM2-135M-Instruct, ${LAST}, our run over every test question`) },
];

const RUN_ROWS = [ZERO, FIVE];

test('the published runs, chosen by keyboard, drawn in the browser as the server draws them', { concurrency: 2 }, async (t) => {
  for (const c of CASES) {
    await t.test(c.name, async () => {
      const { page, problems } = await open(c.name);
      const renders = await choose(page, c.select, c.option);
      await checkAgainstServer(page, c.name, renders);
      const summary = await widgetOf(page, c.name).locator('.widget-summary').evaluate(summaryText);
      const view = await served(c.name, new URL(page.url()).search.slice(1));
      assert.match(summary, c.about);
      for (const figure of c.expected(RUN_ROWS, view)) assert.match(summary, new RegExp(escaped(figure)), `${c.name}: ${figure}`);
      assert.deepEqual(await axeViolations(page), [], `${c.name}: axe-core violations`);
      await screenshot(page, `live-runs-${c.name}`);
      assert.deepEqual(problems, [], `${c.name}: console errors`);
      await page.close();
    });
  }

  await t.test('scaling plot: the live model is a series a reader can focus', async () => {
    const { page, problems } = await open('scaling-plot');
    const view = await served('scaling-plot', '');
    assert.ok(view.state.show.includes('live'));
    await tabTo(page, '.series-live.fig-point');
    const label = await page.evaluate(() => document.activeElement.getAttribute('aria-label'));
    assert.equal(label, `SmolLM2-135M (our runs), 135M parameters, 0-shot: ${(100 * share(RUN_ROWS[0])).toFixed(1)}%`);
    for (const scheme of ['light', 'dark']) { // each series its own colour, seen against the background (WCAG 1.4.11: 3:1)
      await page.emulateMedia({ colorScheme: scheme });
      const colours = await page.$$eval('#w-scaling-plot svg.widget-figure:not(.widget-figure-print) circle.fig-legend', (dots) => dots.map((dot) => getComputedStyle(dot).fill));
      const background = await page.$eval('#w-scaling-plot', (el) => getComputedStyle(el).backgroundColor);
      assert.equal(colours.length, 4, 'three of the paper\'s series and ours');
      assert.equal(new Set(colours).size, 4, `${scheme}: ${colours.join(', ')}`);
      for (const colour of colours) {
        assert.ok(contrast(colour, background) >= 3, `${scheme}: ${colour} on ${background} is ${contrast(colour, background).toFixed(2)}:1`);
      }
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
});
