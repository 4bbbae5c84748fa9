// Figures legible at every width: on every widget page and every paper page, at 320, 360, 768 and
// 1280 px, each SVG text is drawn at 12 px or more, lies inside its picture, and overlaps no other
// text; and wide figures leave the prose column on a wide screen without leaving a phone's.
//
// The worker is kept from starting (Pyodide's files are refused): every redraw then comes from the
// server, the same Python the worker runs (widgets.test.mjs checks they agree), and the machine's
// two cores are spared eight Pyodides per page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, BASE_URL, launch } from './lib.mjs';
import { everyWidgetDrawnForItsWidth } from './widget-helpers.mjs';

const WIDTHS = [320, 360, 768, 1280];
const PAPERS = ['mmlu', 'mmlu-pro', 'scoring-lesson'];

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

async function widgetPages() {
  const page = await browser.newPage();
  const urls = [];
  for (const paper of PAPERS) {
    await page.goto(`${BASE_URL}/${paper}/widgets/`);
    const links = await page.$$eval('main a[href]', (as) => as.map((a) => new URL(a.href).pathname));
    urls.push(...new Set(links.filter((p) => new RegExp(`^/${paper}/widgets/[a-z0-9-]+$`).test(p))));
  }
  await page.close();
  return urls;
}

// Every visible text of every visible SVG in the page's main part: its rendered font size, and
// whether its box leaves the SVG's box or meets another text's box.
function measure() {
  const hidden = (el, svg) => {
    for (let node = el; node && node !== svg.parentNode; node = node.parentNode) {
      const style = getComputedStyle(node);
      if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return true;
    }
    return false;
  };
  const where = (svg) => {
    const widget = svg.closest('section.widget');
    if (widget) return `widget ${widget.dataset.widget}`;
    const diagram = svg.closest('figure');
    return diagram && diagram.id ? diagram.id : 'svg';
  };
  const found = { texts: 0, small: [], clipped: [], overlapping: [] };
  for (const svg of document.querySelectorAll('main svg')) {
    if (svg.parentNode.closest('svg') || hidden(svg, svg)) continue;
    const frame = svg.getBoundingClientRect();
    if (frame.width === 0 || frame.height === 0) continue;
    const boxes = [];
    for (const text of svg.querySelectorAll('text')) {
      if (hidden(text, svg) || !text.textContent.trim()) continue;
      found.texts += 1;
      const name = `${where(svg)}: “${text.textContent.trim().slice(0, 40)}”`;
      const matrix = text.getScreenCTM(); // the viewBox's scale, however the picture is fitted in its box
      const scale = Math.hypot(matrix.a, matrix.b);
      const sizes = [text, ...text.querySelectorAll('tspan')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
      const size = Math.min(...sizes);
      if (size < 11.95) found.small.push(`${name} ${size.toFixed(1)} px`);
      const box = text.getBoundingClientRect();
      if (box.left < frame.left - 1 || box.right > frame.right + 1 || box.top < frame.top - 1 || box.bottom > frame.bottom + 1) {
        found.clipped.push(name);
      }
      for (const other of boxes) {
        const across = Math.min(box.right, other.box.right) - Math.max(box.left, other.box.left);
        const down = Math.min(box.bottom, other.box.bottom) - Math.max(box.top, other.box.top);
        if (across > 1 && down > 1) found.overlapping.push(`${name} and “${other.text}”`);
      }
      boxes.push({ box, text: text.textContent.trim().slice(0, 40) });
    }
  }
  return found;
}

test('every SVG text is 12 px or more, inside its picture and clear of other text, at 320, 360, 768 and 1280 px', async () => {
  const urls = [...await widgetPages(), ...PAPERS.map((p) => `/${p}/`)];
  assert.ok(urls.length >= 19, `only ${urls.length} pages found`);
  const report = {};
  const totals = Object.fromEntries(WIDTHS.map((width) => [width, { pages: 0, texts: 0, small: 0, clipped: 0, overlapping: 0 }]));
  // Each page is opened once, at the narrowest width, and then widened as a reader turns a phone or
  // widens a window: every widget redraws for its new width before it is measured.
  const context = await browser.newContext({ viewport: { width: WIDTHS[0], height: 900 } });
  await context.route(/\/pyodide\//, (route) => route.abort());
  const page = await context.newPage();
  for (const url of urls) {
    await page.setViewportSize({ width: WIDTHS[0], height: 900 });
    await page.goto(`${BASE_URL}${url}`);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await everyWidgetDrawnForItsWidth(page);
      const found = await page.evaluate(measure);
      report[`${width} ${url}`] = found;
      const total = totals[width];
      total.pages += 1;
      total.texts += found.texts;
      for (const kind of ['small', 'clipped', 'overlapping']) total[kind] += found[kind].length;
    }
  }
  await context.close();
  writeFileSync(path.join(ARTIFACTS, 'legibility.json'), JSON.stringify({ totals, report }, null, 1));
  console.log(JSON.stringify(totals));
  const problems = Object.entries(report).flatMap(([where, found]) => ['small', 'clipped', 'overlapping']
    .flatMap((kind) => found[kind].map((item) => `${where} ${kind}: ${item}`)));
  assert.deepEqual(problems.slice(0, 60), [], `${problems.length} problems (all in tests/artifacts/legibility.json)`);
});

test('a widget redraws for its new width when the window narrows', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route(/\/pyodide\//, (route) => route.abort());
  const page = await context.newPage();
  await page.goto(`${BASE_URL}/mmlu/widgets/scaling-plot`);
  await everyWidgetDrawnForItsWidth(page);
  const wide = await page.$eval('section.widget', (w) => Number(w.dataset.drawnWidth));
  await page.setViewportSize({ width: 360, height: 900 });
  await page.waitForFunction((before) => {
    const w = document.querySelector('section.widget');
    return Number(w.dataset.drawnWidth) !== before && !w.hasAttribute('aria-busy');
  }, wide, { timeout: 20_000 });
  const found = await page.evaluate(measure);
  assert.deepEqual([...found.small, ...found.clipped, ...found.overlapping], []);
  const [drawn, shown] = await page.$eval('section.widget', (w) => [Number(w.dataset.drawnWidth), Number(w.dataset.shownWidth)]);
  assert.equal(drawn, shown, 'the picture is drawn for the width it is shown at');
  assert.ok(drawn < 360 && wide > drawn, `drawn at ${wide} px, then at ${drawn} px`);
  await context.close();
});

test('wide figures leave the prose column on a wide screen, centred, and stay inside a phone screen', async () => {
  for (const [width, wider] of [[1280, true], [360, false]]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    await context.route(/\/pyodide\//, (route) => route.abort());
    const page = await context.newPage();
    for (const paper of PAPERS) {
      await page.goto(`${BASE_URL}/${paper}/`);
      await everyWidgetDrawnForItsWidth(page);
      const found = await page.evaluate(() => {
        const box = (el) => { const { left, right, width } = el.getBoundingClientRect(); return { left, right, width }; };
        return {
          paragraph: box(document.querySelector('.section-body > p')),
          // Drawn widgets (a live one, the three scorers, has a form and tables, not a picture).
          widgets: [...document.querySelectorAll('main section.widget[data-widget]:not([data-driver="live"])')].map((el) => ({ name: el.id, box: box(el), figure: box(el.querySelector('svg.widget-figure')) })),
          diagrams: [...document.querySelectorAll('main figure.diagram')].map((el) => ({ name: el.id, box: box(el) })),
          viewport: document.documentElement.clientWidth,
        };
      });
      assert.ok(found.widgets.length > 0, `${paper}: no widgets`);
      const column = (found.paragraph.left + found.paragraph.right) / 2;
      assert.ok(Math.abs(column - found.viewport / 2) < 2, `${paper} at ${width}: the column's centre is at ${column}, the page's at ${found.viewport / 2}`);
      for (const { name, box } of [...found.widgets, ...found.diagrams]) {
        assert.ok(box.left >= 0 && box.right <= found.viewport, `${paper} ${name} at ${width}: ${box.left}–${box.right} leaves the ${found.viewport} px screen`);
      }
      if (!wider) continue;
      for (const { name, box, figure } of found.widgets) {
        assert.ok(box.width > found.paragraph.width + 100, `${paper} ${name} at ${width}: ${box.width} px wide, the paragraph ${found.paragraph.width}`);
        assert.ok(Math.abs((box.left + box.right) / 2 - column) < 2, `${paper} ${name} is not centred on the column`);
        if (!name.endsWith('prompt-anatomy') && !name.endsWith('mmlu-vs-pro')) { // these two cap their pictures' width
          assert.ok(figure.width > found.paragraph.width, `${paper} ${name}: its picture is ${figure.width} px wide, no wider than the text`);
        }
      }
    }
    await context.close();
  }
});
