// Figures a reader can decode and widgets that fit a phone, on every document page at 360 and
// 1280 px, light and dark:
// - every chart has a key: a legend or labels that name its series where they are drawn. The
//   convention: a widget's chart marks them with the class `fig-key` (scene.key, scene.legend,
//   scene.direct_labels, Rows.name), and at least one of them shows text inside the picture; a
//   diagram is drawn with its words on it, so it shows text;
// - every mark of a widget's chart (a bar, dot, band, line: any shape but gridlines and axes) is at
//   least 3:1 against the widget's background, by its fill or by its outline, from computed styles;
// - at 360 px, each widget's first view (from its top to the end of its figure, the headline
//   sentence and its first two controls) is at most 780 px tall, at most two controls show before
//   "More settings" (a live widget's form is the question it scores: it is measured, not counted), and no data editor (a text box for answers or runs, a file chooser) shows
//   until asked for;
// - at 360 px, /mmlu/ is at most 45,000 px tall, what a first reading can skip folded (below);
// - from the contents, a keyboard reader reaches each section's first figure control in at most
//   20 Tab stops (a link to the section's figures comes first), at 1280 px light and 360 px dark.
// - at 360 and 1280 px: no reference line runs through a text in a chart; no more than 48 px blank
//   above a widget in the reading column, nor 32 px above its "Share / embed"; checkboxes in the
//   palette's blue; the group bars' names on one line, the scaling plot's two dots of this site's
//   model at its true size and named 0- and 5-shot, MMLU against MMLU-Pro's names by their dots;
//   at 360 px, no code block wider than its box.
//
// The worker is kept from starting (Pyodide's files are refused): redraws come from the server, the
// same Python (widgets.test.mjs checks they agree). Screenshots of every widget go to
// tests/artifacts/layout/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, BASE_URL, launch, screenshot } from './lib.mjs';
import { everyWidgetDrawnForItsWidth } from './widget-helpers.mjs';
import { tabsToFirstControl } from './keyboard.mjs';

const PAPERS = ['mmlu', 'mmlu-pro', 'scoring-lesson'];
const FIRST_VIEW_MAX = 780;
const MMLU_HEIGHT_MAX = 45_000;
const SHOTS = path.join(ARTIFACTS, 'layout');
mkdirSync(SHOTS, { recursive: true });

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

// One page per document and width, opened once: light and dark are the same page after the
// reader's system switches its colour scheme (the page follows prefers-color-scheme through CSS).
const opened = new Map();
async function open(paper, width, scheme) {
  const key = `${paper} ${width}`;
  if (!opened.has(key)) {
    const context = await browser.newContext({ viewport: { width, height: 900 }, reducedMotion: 'reduce' });
    await context.route(/\/pyodide\//, (route) => route.abort());
    const page = await context.newPage();
    await page.goto(`${BASE_URL}/${paper}/`);
    await everyWidgetDrawnForItsWidth(page);
    opened.set(key, page);
  }
  const page = opened.get(key);
  await page.emulateMedia({ colorScheme: scheme });
  return page;
}

// Runs in the page: every visible chart and diagram, whether it shows a key, and every mark under 3:1.
function inspectCharts() {
  const shown = (el, stop) => {
    for (let node = el; node && node !== stop; node = node.parentNode) {
      const style = getComputedStyle(node);
      if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false;
    }
    return true;
  };
  const rgba = (text) => {
    const m = text.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [r, g, b, a];
  };
  const luminance = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const over = (colour, alpha, back) => colour.slice(0, 3).map((v, i) => v * alpha + back[i] * (1 - alpha));
  const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const opacity = (el, stop) => {
    let value = 1;
    for (let node = el; node && node !== stop; node = node.parentNode) value *= Number(getComputedStyle(node).opacity);
    return value;
  };
  const STRUCTURE = ['fig-grid', 'fig-axis', 'fig-divider'];
  const charts = [];
  for (const svg of document.querySelectorAll('main section.widget svg.widget-figure, main figure svg')) {
    if (svg.parentNode.closest('svg') || !shown(svg, document.body)) continue;
    const frame = svg.getBoundingClientRect();
    if (frame.width === 0 || frame.height === 0) continue;
    const widget = svg.closest('section.widget');
    const name = widget ? `widget ${widget.dataset.widget || widget.id}` : `diagram ${svg.closest('figure').id || svg.getAttribute('aria-labelledby')}`;
    const inside = (text) => {
      const box = text.getBoundingClientRect();
      return text.textContent.trim() && box.width > 0 && box.left >= frame.left - 1 && box.right <= frame.right + 1
        && box.top >= frame.top - 1 && box.bottom <= frame.bottom + 1 && shown(text, svg.parentNode);
    };
    const keyTexts = widget
      ? [...svg.querySelectorAll('.fig-key')].flatMap((k) => (k.tagName === 'text' ? [k] : [...k.querySelectorAll('text')]))
      : [...svg.querySelectorAll('text')];
    const chart = { name, keyed: keyTexts.some(inside), faint: [] };
    if (widget) {
      const back = rgba(getComputedStyle(widget).backgroundColor);
      for (const el of svg.querySelectorAll('g.marks rect, g.marks circle, g.marks line, g.marks polyline, g.marks path, g.marks polygon, g.marks ellipse')) {
        if (!shown(el, svg.parentNode) || STRUCTURE.some((c) => el.closest(`.${c}`))) continue;
        const style = getComputedStyle(el);
        const alpha = opacity(el, svg.parentNode);
        // Each paint that shows (a fill on a shape with an inside, an outline at least 1 px wide); a
        // wholly transparent one (a drag handle's hit area) draws nothing and is not a mark.
        const paints = [];
        const fill = rgba(style.fill);
        if (fill && el.tagName !== 'line' && el.tagName !== 'polyline') paints.push([fill, fill[3] * Number(style.fillOpacity) * alpha]);
        const stroke = rgba(style.stroke);
        if (stroke && parseFloat(style.strokeWidth) >= 1) paints.push([stroke, stroke[3] * Number(style.strokeOpacity) * alpha]);
        const seen = paints.filter(([, a]) => a > 0).map(([colour, a]) => ratio(over(colour, a, back), back));
        if (!seen.length) continue;
        const best = Math.max(...seen);
        if (best < 3) chart.faint.push(`${el.tagName}.${el.getAttribute('class') || el.parentNode.getAttribute('class')} ${best.toFixed(2)}:1`);
      }
    }
    charts.push(chart);
  }
  return charts;
}

// Runs in the page: what a reader sees crossed, cut off or left blank (issue 40):
// - texts a reference line (chance, expert, a divider) runs through, in every widget's chart;
// - the blank above each widget, from the end of what comes before it in the reading column (a note
//   floated in the margin is beside the column, not in it);
// - the blank above each widget's "Share / embed", from the lowest thing drawn above it, with the
//   calculator's status line empty, as it is unless the calculator failed (here it did: no Pyodide);
// - the checkboxes' colour (accent-color): the palette's, not the browser's bright blue.
function inspectBlanksAndCrossings() {
  const shown = (el) => el.checkVisibility({ opacityProperty: true, visibilityProperty: true })
    && el.getBoundingClientRect().width > 0;
  const crossed = [];
  for (const svg of document.querySelectorAll('main section.widget svg[data-role="figure"]')) {
    if (!shown(svg)) continue;
    const name = svg.closest('section.widget').dataset.widget;
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim() && shown(t) && !t.closest('.fig-handle'));
    for (const line of svg.querySelectorAll('line.fig-ref, line.fig-divider, .fig-ref line')) {
      const l = line.getBoundingClientRect();
      for (const text of texts) {
        const t = text.getBoundingClientRect();
        // The glyphs' own box, less the line spacing above and below them.
        const [top, bottom] = [t.top + 0.2 * t.height, t.bottom - 0.2 * t.height];
        if (l.left < t.right && l.right > t.left && l.top < bottom && l.bottom > top) crossed.push(`${name}: "${text.textContent}"`);
      }
    }
  }
  const inColumn = (el) => getComputedStyle(el).float === 'none' && el.getBoundingClientRect().height > 0;
  const above = [];
  const share = [];
  for (const w of document.querySelectorAll('main section.widget[data-widget]')) {
    let before = (w.closest('.widget-wrap') || w).previousElementSibling;
    while (before && !inColumn(before)) before = before.previousElementSibling;
    if (before) above.push([w.dataset.widget, Math.round(w.getBoundingClientRect().top - before.getBoundingClientRect().bottom)]);
    const engine = w.querySelector('[data-role="engine"]'); // a live form has none
    const said = engine?.textContent;
    if (engine) engine.textContent = '';
    const summary = w.querySelector('.widget-share > summary').getBoundingClientRect();
    let lowest = 0;
    for (const el of w.querySelectorAll('*')) {
      if (el.closest('.widget-share') || (el.children.length && !el.matches('select, svg, button')) || !shown(el)) continue;
      const box = el.getBoundingClientRect();
      if (box.height > 0 && box.bottom <= summary.top + 1) lowest = Math.max(lowest, box.bottom);
    }
    share.push([w.dataset.widget, Math.round(summary.top - lowest)]);
    if (engine) engine.textContent = said;
  }
  const boxes = [...document.querySelectorAll('main section.widget input[type="checkbox"]')].filter(shown)
    .map((box) => getComputedStyle(box).accentColor);
  return { crossed, above, share, boxes: [...new Set(boxes)] };
}

// Runs in the page: marks and their names, in the figures' own units (issue 40): the group bars'
// names (their baselines), the scaling plot's two dots of this site's model (where they stand, what
// is written by them) and MMLU against MMLU-Pro's model names, each at its dot's height or joined
// to it by a leader.
function inspectNamedMarks() {
  const figureOf = (name) => [...document.querySelectorAll(`section.widget[data-widget="${name}"] svg[data-role="figure"]`)]
    .find((svg) => svg.getBoundingClientRect().width > 0);
  const found = {};
  const groups = figureOf('group-bars');
  if (groups) found.groupBaselines = [...new Set([...groups.querySelectorAll('text.fig-group-label')].map((t) => t.getAttribute('y')))];
  const scaling = figureOf('scaling-plot');
  if (scaling) {
    found.ours = [...scaling.querySelectorAll('g.fig-point.series-live')].map((g) => ({
      cx: g.querySelector('circle').getAttribute('cx'),
      named: [...g.querySelectorAll('text')].filter((t) => getComputedStyle(t).opacity !== '0').map((t) => t.textContent),
    }));
  }
  const slopes = figureOf('mmlu-vs-pro');
  if (slopes) {
    const leaders = [...slopes.querySelectorAll('line.fig-leader')].map((l) => ['x1', 'y1', 'x2', 'y2'].map((k) => Number(l.getAttribute(k))));
    found.apart = [];
    for (const text of slopes.querySelectorAll('.fig-key text')) {
      const point = [...slopes.querySelectorAll('g.fig-point')].find((g) => g.getAttribute('aria-label').startsWith(`${text.textContent}:`));
      const dot = [...point.querySelectorAll('circle')].at(-1); // its MMLU-Pro end
      const [cx, cy] = [Number(dot.getAttribute('cx')), Number(dot.getAttribute('cy'))];
      const [tx, ty] = [Number(text.getAttribute('x')), Number(text.getAttribute('y')) - 4]; // the name's left, mid-height
      const joined = leaders.some(([x1, y1, x2, y2]) => Math.hypot(x1 - cx, y1 - cy) <= 5 && Math.hypot(x2 - tx, y2 - ty) <= 3);
      if (Math.abs(ty - cy) > 3 && !joined) found.apart.push(`${text.textContent}: ${Math.abs(ty - cy).toFixed(1)} px off, no leader`);
    }
  }
  return found;
}

// Runs in the page: each widget's first view, its controls before the fold, and data editors shown.
function inspectFirstViews() {
  // Shown: laid out, not hidden, and not folded in a closed disclosure (whose content keeps its box).
  const visible = (el) => {
    if (!el || !el.checkVisibility({ visibilityProperty: true })) return false;
    const folded = el.closest('details:not([open])');
    if (folded && !el.closest('details:not([open]) > summary')) return false;
    const box = el.getBoundingClientRect();
    return box.height > 0 && box.width > 0;
  };
  const found = [];
  for (const w of document.querySelectorAll('main section.widget')) {
    const top = w.getBoundingClientRect().top;
    const form = w.querySelector('form');
    const fields = form ? [...form.querySelectorAll('.control, .ls-field, fieldset, select, textarea, input:not([type="hidden"])')]
      .filter((el) => visible(el) && !el.closest('.widget-share') && !(el.parentNode.closest('.control, .ls-field, fieldset'))) : [];
    const firstTwo = fields.slice(0, 2);
    const parts = [w.querySelector('.widget-title'), w.querySelector('.widget-blurb'),
      ...w.querySelectorAll('svg[data-role="figure"]'), w.querySelector('.widget-summary > p'), ...firstTwo].filter(visible);
    const bottom = Math.max(...parts.map((el) => el.getBoundingClientRect().bottom));
    const editors = [...w.querySelectorAll('textarea, input[type="file"]')].filter((el) => visible(el) && !el.closest('.widget-share'));
    found.push({
      name: w.dataset.widget || w.id,
      height: Math.round(bottom - top),
      controls: fields.length,
      drawn: Boolean(w.querySelector('form.widget-controls')), // a live widget's form is its question, not settings
      editors: editors.map((el) => el.id || el.name),
    });
  }
  return found;
}

for (const paper of PAPERS) {
  for (const width of [360, 1280]) {
    for (const scheme of ['light', 'dark']) {
      test(`/${paper}/ at ${width} px, ${scheme}: every chart keyed, every mark 3:1`, async () => {
        const page = await open(paper, width, scheme);
        const charts = await page.evaluate(inspectCharts);
        assert.ok(charts.length >= 2, `/${paper}/ shows its charts (${charts.length} found)`);
        const unkeyed = charts.filter((c) => !c.keyed).map((c) => c.name);
        assert.deepEqual(unkeyed, [], `charts with no key and no direct labels: ${unkeyed.join(', ')}`);
        const faint = charts.filter((c) => c.faint.length).map((c) => `${c.name}: ${[...new Set(c.faint)].join(', ')}`);
        assert.deepEqual(faint, [], `marks under 3:1 against their background:\n${faint.join('\n')}`);
        for (const section of await page.$$('main section.widget')) { // to look at
          const name = await section.evaluate((el) => { el.scrollIntoView(); return el.dataset.widget || el.id; });
          const clip = await section.evaluate((el) => {
            const box = el.getBoundingClientRect();
            return { x: Math.max(0, box.left - 4), y: Math.max(0, box.top), width: Math.min(box.width + 8, innerWidth), height: Math.min(box.height, innerHeight - box.top) };
          });
          await page.screenshot({ path: path.join(SHOTS, `${paper}-${name}-${width}-${scheme}.png`), clip });
        }
      });
    }
  }

  for (const width of [360, 1280]) {
    test(`/${paper}/ at ${width} px: no line through a text, no blank above a widget or its share box, palette checkboxes`, async () => {
      const page = await open(paper, width, 'light');
      const seen = await page.evaluate(inspectBlanksAndCrossings);
      assert.deepEqual(seen.crossed, [], 'texts a reference line runs through');
      const blank = seen.above.filter(([, gap]) => gap > 48).map(([name, gap]) => `${name} ${gap} px`);
      assert.deepEqual(blank, [], 'blank in the reading column above a widget');
      const roomy = seen.share.filter(([, gap]) => gap > 32).map(([name, gap]) => `${name} ${gap} px`);
      assert.deepEqual(roomy, [], 'blank above "Share / embed"');
      if (seen.boxes.length) assert.deepEqual(seen.boxes, ['rgb(47, 95, 179)'], 'checkboxes in the palette\'s blue');
      const named = await page.evaluate(inspectNamedMarks);
      if (width === 360) { // a code block's lines wrap in its box: none runs off to the right
        const wide = await page.$$eval('main pre', (blocks) => blocks.filter((pre) => pre.getBoundingClientRect().width > 0
          && pre.scrollWidth > pre.clientWidth + 1).map((pre) => `${pre.scrollWidth} px in ${pre.clientWidth}: ${pre.textContent.slice(0, 40)}`));
        assert.deepEqual(wide, [], 'code blocks wider than their box');
      }
      if (paper === 'mmlu') assert.ok(named.groupBaselines && named.ours?.length === 2, 'the group bars and the scaling plot are found');
      if (paper === 'mmlu-pro') assert.ok(named.apart, 'MMLU against MMLU-Pro is found');
      if (named.groupBaselines) assert.equal(named.groupBaselines.length, 1, `group bars' names on ${named.groupBaselines.length} lines`);
      if (named.ours) { // at the model's true size, both; told apart by the words beside them
        assert.equal(new Set(named.ours.map((p) => p.cx)).size, 1, `our model's dots at ${named.ours.map((p) => p.cx)}`);
        assert.deepEqual(named.ours.map((p) => p.named).flat().sort(), ['0-shot', '5-shot']);
      }
      if (named.apart) assert.deepEqual(named.apart, [], 'model names away from their dots');
      const dark = await open(paper, width, 'dark');
      const boxes = (await dark.evaluate(inspectBlanksAndCrossings)).boxes;
      if (boxes.length) assert.deepEqual(boxes, ['rgb(122, 167, 255)'], 'checkboxes in the dark palette\'s blue');
    });
  }

  test(`/${paper}/ at 360 px: each widget's first view fits a phone's screen`, async () => {
    const page = await open(paper, 360, 'light');
    const views = await page.evaluate(inspectFirstViews);
    assert.ok(views.length >= 3, `/${paper}/ holds its widgets`);
    for (const v of views) console.log(`  ${paper} ${v.name}: first view ${v.height} px, ${v.controls} controls before the fold`);
    const tall = views.filter((v) => v.height > FIRST_VIEW_MAX).map((v) => `${v.name} ${v.height} px`);
    assert.deepEqual(tall, [], `first views over ${FIRST_VIEW_MAX} px at 360 px`);
    const crowded = views.filter((v) => v.drawn && v.controls > 2).map((v) => `${v.name} (${v.controls})`);
    assert.deepEqual(crowded, [], 'more than two controls before "More settings"');
    const editing = views.filter((v) => v.editors.length).map((v) => `${v.name}: ${v.editors.join(', ')}`);
    assert.deepEqual(editing, [], 'data editors shown before they are asked for');
  });
}

// A keyboard reader who follows the contents to a section reaches its first figure's first control
// in at most 20 Tab presses: every glossary term, symbol and citation of the text before it is a tab
// stop (as many as 48 of them: bench/keyboard_stops.mjs counts them), so the section's first stop is a
// link to each of its figures, shown while focused.
const TAB_STOPS_MAX = 20;
for (const paper of PAPERS) {
  test(`/${paper}/: from the contents, each section's first figure control within ${TAB_STOPS_MAX} Tab stops`, async () => {
    for (const [width, scheme] of [[1280, 'light'], [360, 'dark']]) {
      const page = await open(paper, width, scheme);
      const sections = await page.$$eval('section.paper-section', (all) => all.map((s) => ({
        id: s.id, figure: s.querySelector('section.widget[id^="w-"]')?.id ?? null,
        skip: s.querySelector('.figure-skip')?.hash.slice(1) ?? null })).filter((s) => s.figure));
      assert.ok(sections.length >= 3, `/${paper}/ has sections with figures`);
      // Every section at 1280 px; on a phone (the same links, shown the same way) the first two.
      for (const [n, { id, figure, skip }] of sections.slice(0, width === 1280 ? undefined : 2).entries()) {
        assert.equal(skip, figure, `§${id} links first to its first figure`);
        const reached = await tabsToFirstControl(page, id, { skip: true, shot: n === 0 && `layout/keyboard-skip-${paper}-${width}-${scheme}` });
        console.log(`  ${paper} §${id} at ${width} px: ${reached.stops} Tab stops to ${figure}'s first control`);
        assert.equal(reached.widget, figure, `§${id}: the first control reached is ${figure}'s`);
        assert.ok(reached.stops <= TAB_STOPS_MAX, `§${id} at ${width} px: ${reached.stops} Tab stops`);
      }
    }
  });
}

// Folded widgets, a phone's tighter spacing, the glossary folded on a phone (it opens for a link into it
// and for print) and a narrower fallback serif before DejaVu Serif took /mmlu/ from 114,604 px to about
// 61,500; folding on a phone what a first reading can skip (each "The math" rung and the other runs of
// equations and snippets, each "Reading it", "Try it" and note, the Sources list: engine/markdown_ext.py,
// PhoneFoldTreeprocessor) to about 42,300. The goal, 45,000, leaves room for the widgets still to come.
// Nothing is removed: the folds open on a tap without JavaScript, a link into one opens it, and wider
// than a phone they show what they hold with no summary to tap.
test(`/mmlu/ at 360 px is at most ${MMLU_HEIGHT_MAX.toLocaleString('en')} px tall, with nothing removed from the text`, async () => {
  const page = await open('mmlu', 360, 'light');
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  console.log(`  /mmlu/ at 360 px: ${height} px`);
  assert.ok(height <= MMLU_HEIGHT_MAX, `/mmlu/ is ${height} px tall at 360 px`);
  const fold = page.locator('details.glossary-fold');
  assert.equal(await fold.getAttribute('open'), null, 'the glossary is folded on a phone');
  await page.goto(`${page.url().split('#')[0]}#glossary-symbols`);
  assert.notEqual(await fold.getAttribute('open'), null, 'a link into the glossary opens it');
  assert.ok((await fold.locator('dt').count()) > 50, 'the glossary keeps its entries');

  const folds = page.locator('details.phone-fold');
  const summaries = await folds.locator('> summary').allTextContents();
  assert.ok(summaries.filter((s) => s === 'Show the math').length >= 10, `the math folds on a phone: ${summaries}`);
  for (const words of ['How to read the figure', 'A note']) assert.ok(summaries.includes(words), `a fold “${words}”`);
  assert.ok(summaries.some((s) => /^The \d+ works$/.test(s)), 'a fold for the sources, "The N works"');
  const math = folds.filter({ has: page.locator('.equation') }).first();
  const equation = math.locator('.equation').first();
  assert.equal(await equation.isVisible(), false, 'a folded equation is out of sight');
  await math.locator('> summary').scrollIntoViewIfNeeded();
  await screenshot(page, 'layout/mmlu-360-folded-math');
  await math.locator('> summary').click();
  assert.equal(await equation.isVisible(), true, 'a tap on “Show the math” shows it');
  await screenshot(page, 'layout/mmlu-360-opened-math');
  const usedInFold = await page.$eval('details.phone-fold:not([open]) a.term[id]', (a) => a.id);
  await page.goto(`${page.url().split('#')[0]}#${usedInFold}`);
  assert.equal(await page.locator(`#${usedInFold}`).isVisible(), true, 'a link to a term used in a fold opens it');

  const wide = await open('mmlu', 1280, 'light');
  const shown = await wide.$$eval('details.phone-fold', (all) => all.map((d) => ({
    summary: d.querySelector('summary').getBoundingClientRect().height,
    content: [...d.children].filter((c) => c.tagName !== 'SUMMARY').some((c) => c.getBoundingClientRect().height > 0) })));
  assert.ok(shown.length >= 20 && shown.every((d) => d.summary === 0 && d.content), 'wider than a phone, every fold shows what it holds');

  await page.emulateMedia({ media: 'print' });
  await page.evaluate(() => { document.querySelector('details.glossary-fold').open = false; window.dispatchEvent(new Event('beforeprint')); });
  assert.notEqual(await fold.getAttribute('open'), null, 'printing opens it');
  await page.emulateMedia({ media: null });
});
