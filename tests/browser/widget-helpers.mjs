// Helpers for the widget browser tests and the redraw bench.

import assert from 'node:assert/strict';
import path from 'node:path';
import { ARTIFACTS, BASE_URL } from './lib.mjs';

export function widgetOf(page, name) {
  return page.locator(`section.widget[data-widget="${name}"]`);
}

// Press Tab until `selector` has focus (keyboard only); returns the widget's redraw count then. A
// control folded in a disclosure ("More settings", a data editor) is reached as a reader reaches
// it: Tab to the disclosure's summary and press Enter, then Tab on.
export async function tabTo(page, selector, limit = 80) {
  const folds = await page.evaluate((sel) => {
    const names = [];
    for (let fold = document.querySelector(sel)?.closest('details:not([open])'); fold; fold = fold.parentElement.closest('details:not([open])')) {
      const summary = fold.querySelector(':scope > summary');
      summary.dataset.fold = `fold-${document.querySelectorAll('[data-fold]').length}`;
      names.unshift(summary.dataset.fold);
    }
    return names;
  }, selector);
  for (const name of folds) {
    await focusByTab(page, `summary[data-fold="${name}"]`, limit);
    await page.keyboard.press('Enter');
  }
  return focusByTab(page, selector, limit);
}

async function focusByTab(page, selector, limit) {
  for (let i = 0; i < limit; i += 1) {
    const found = await page.evaluate((sel) => document.activeElement && document.activeElement.matches(sel), selector);
    if (found) {
      return page.evaluate(() => Number(document.activeElement.closest('section.widget').dataset.renders || 0));
    }
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

// The widget's redraw count once it is not computing: the count to pass to settle() after an action
// whose request starts late (a click that reads files first), so that a redraw already under way
// (the first one at this width) is not taken for the action's.
export async function idleRenders(widget) {
  await widget.page().waitForFunction((el) => !el.hasAttribute('aria-busy'), await widget.elementHandle());
  return Number(await widget.getAttribute('data-renders') || 0);
}

// Wait until the widget has redrawn more than `renders` times and is not computing any more.
export async function settle(page, name, renders) {
  await page.waitForFunction(([n, count]) => {
    const el = document.querySelector(`section.widget[data-widget="${n}"]`);
    return Number(el.dataset.renders || 0) > count && !el.hasAttribute('aria-busy');
  }, [name, renders], { timeout: 30_000 });
}

// The live widget next to what the server renders for the widget's current state, at the width
// its figure is drawn for.
export async function serverMatch(page, name) {
  return page.evaluate(async (n) => {
    const live = document.querySelector(`section.widget[data-widget="${n}"]`);
    const query = live.dataset.query;
    const width = `width=${live.dataset.drawnWidth}`;
    const response = await fetch(`/embed/${live.dataset.paper}/${n}?${query ? `${query}&` : ''}${width}`);
    const served = new DOMParser().parseFromString(await response.text(), 'text/html').querySelector('section.widget');
    const marks = (el) => [...el.querySelectorAll('svg[data-role="figure"] g.marks *')].map((e) => `${e.tagName} ${
      [...e.attributes].map((a) => `${a.name}=${a.value}`).sort().join(' ')} ${e.children.length ? '' : e.textContent}`).join('\n');
    const summary = (el) => [...el.querySelectorAll('.widget-summary p')].map((p) => p.textContent);
    const prompt = (el) => { const pre = el.querySelector('.prompt-text'); return pre ? pre.textContent : null; };
    return {
      query,
      liveMarks: marks(live), serverMarks: marks(served),
      liveSummary: summary(live), serverSummary: summary(served),
      livePrompt: prompt(live), serverPrompt: prompt(served),
    };
  }, name);
}

// After an interaction: wait for the redraw, then the picture, the text and the URL must be what
// the server renders for the widget's state.
export async function checkAgainstServer(page, name, renders) {
  await settle(page, name, renders);
  const match = await serverMatch(page, name);
  assert.equal(match.liveMarks, match.serverMarks, `${name}: the redrawn SVG differs from the server's`);
  assert.deepEqual(match.liveSummary, match.serverSummary, `${name}: the text differs from the server's`);
  assert.equal(new URL(page.url()).search.replace(/^\?/, ''), match.query, `${name}: the URL does not hold the state`);
  return match;
}

// Print a paper's page (no worker: the picture is the server's) and check that each of its `count`
// drawn widgets prints as its picture, summary and address, without its controls; saves the PDF.
export async function checkPrinted(browser, paper, count) {
  const context = await browser.newContext();
  await context.route(/\/pyodide\//, (route) => route.abort());
  const page = await context.newPage();
  await page.goto(`${BASE_URL}/${paper}/`);
  await page.emulateMedia({ media: 'print' });
  const widgets = await page.$$eval('section.widget[data-widget]:not([data-driver="live"])', (sections) => sections.map((s) => {
    const visible = (el) => Boolean(el) && getComputedStyle(el).display !== 'none' && el.getBoundingClientRect().height > 0;
    return {
      name: s.dataset.widget,
      figure: [...s.querySelectorAll('svg.widget-figure')].some(visible), // the screen's figure or its print copy
      summary: visible(s.querySelector('.widget-summary')),
      link: visible(s.querySelector('.widget-print-link')) && s.querySelector('.widget-print-link a').href,
      controls: visible(s.querySelector('.widget-controls')),
    };
  }));
  assert.equal(widgets.length, count, `the ${paper} page holds ${count} drawn widgets`);
  for (const w of widgets) {
    assert.ok(w.figure && w.summary, `${w.name} prints its picture and summary`);
    assert.match(w.link, new RegExp(`/${paper}/widgets/${w.name}$`), `${w.name} prints its address`);
    assert.equal(w.controls, false, `${w.name} prints no controls`);
  }
  await page.pdf({ path: path.join(ARTIFACTS, `${paper}-printed.pdf`), format: 'A4' });
  await context.close();
}

// Wait until the widget's figure is drawn for the width its frame has now, after the page loaded or
// its width changed (widget.js sets data-shown-width when it measures, data-drawn-width when it
// draws; right after a resize both still hold the old width, so the frame itself is measured).
// `page` may be a Page or a Frame.
export async function redrawnForWidth(page, name) {
  await page.waitForFunction((n) => {
    const section = document.querySelector(`section.widget[data-widget="${n}"]`);
    const frame = section.querySelector('svg[data-role="figure"]').parentElement;
    const width = String(Math.floor(frame.getBoundingClientRect().width));
    return section.dataset.shownWidth === width && section.dataset.drawnWidth === width;
  }, name, { timeout: 30_000 });
}

// Until every drawn widget on the page shows a picture drawn for the width its frame has now, after
// the page loaded or its width changed. A widget still showing the server's stand-in (drawn for
// another width, then scaled) would be measured wrongly, so a wait that runs out fails, naming it.
export async function everyWidgetDrawnForItsWidth(page) {
  // Runs in the page: whether every drawn widget is drawn for its frame's width, or (for the error
  // message) which are not, and what each shows.
  const check = (done) => {
    const notYet = [...document.querySelectorAll('section.widget[data-widget]:not([data-driver="live"])')]
      .map((w) => {
        const frame = w.querySelector('svg[data-role="figure"]')?.parentElement;
        const width = frame ? Math.floor(frame.getBoundingClientRect().width) : NaN;
        const drawn = w.dataset.ready === 'true' && !w.hasAttribute('aria-busy')
          && Number(w.dataset.shownWidth) === width && Number(w.dataset.drawnWidth) === width;
        return drawn ? '' : `${w.id} (a ${width} px frame, drawn for ${w.dataset.drawnWidth} px)`;
      }).filter(Boolean);
    return done ? notYet.length === 0 : notYet;
  };
  try {
    await page.waitForFunction(check, true, { timeout: 60_000 });
  } catch (error) {
    throw new Error(`not drawn for their width after 60 s: ${(await page.evaluate(check, false)).join(', ')}`, { cause: error });
  }
}
