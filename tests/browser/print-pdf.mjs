// Print each document to a PDF as a reader would (Chromium's print, A4), for test_print.py to measure.
//
//   node tests/browser/print-pdf.mjs OUT_DIR slug...      (BASE_URL from the environment)
//
// Before printing, every picture in the page's main part gets two invisible marks: "PDFMARK-S-<n>"
// at its top-left corner and "PDFMARK-E-<n>" at its bottom-right corner, white, positioned absolutely
// (so nothing moves). A picture is what must never be cut: each chart or diagram (an <svg> not inside
// another), or a figure with none (a quotation, a table) whole. A figure's caption, a widget's
// summary or the prompt text a widget shows may go on over the page, as text does. In the PDF, the two marks of a picture on one page give its box
// there; marks on two pages mean it was cut; no marks, that it was not printed (see below). OUT_DIR/<slug>.json lists the pictures by number, with a
// name to report them by; "summaries", the words of each fold's summary that prints.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BASE_URL, launch } from './lib.mjs';

const [outDir, ...slugs] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });

function markFigures() {
  const shown = (el) => el.getClientRects().length > 0;
  // A widget's figure prints as its parts alone (display: contents: widgets.css), so it has no box.
  const figures = [...document.querySelectorAll('main figure')].filter((f) => !f.parentElement.closest('figure')
    && (shown(f) || [...f.children].some(shown)));
  const mark = (text, corner) => {
    const span = document.createElement('span');
    span.textContent = text;
    span.setAttribute('aria-hidden', 'true');
    // Set through the CSS object model: the page's content security policy refuses style attributes.
    Object.assign(span.style, {
      position: 'absolute', ...corner, font: '8px/1 monospace', color: '#fff', background: 'transparent',
      whiteSpace: 'nowrap', margin: '0', padding: '0', border: '0', pointerEvents: 'none',
    });
    return span;
  };
  // A figure may hold two drawings of one chart, for wide and narrow frames (a container query shows
  // one): both are marked, as the page is laid out here wider than on paper; the one not printed
  // leaves no marks, and the figure's other must.
  const pictures = figures.flatMap((figure, figureNumber) => {
    const parts = [...figure.querySelectorAll('svg')].filter((el) => getComputedStyle(el).display !== 'none'
      && !el.parentElement.closest('svg') && !el.closest('[hidden]'));
    return (parts.length ? parts : [figure]).map((picture) => ({ figure, figureNumber, picture }));
  });
  // In an <svg> the marks are white <text> at the corners of what it draws (its viewBox).
  const svgMark = (svg, text, corner) => {
    const box = svg.viewBox?.baseVal?.width ? svg.viewBox.baseVal : svg.getBBox();
    const mark = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    mark.textContent = text;
    mark.setAttribute('aria-hidden', 'true');
    mark.dataset.pdfmark = text.replace(/^PDFMARK-[SE]-/, '');
    mark.setAttribute('fill', '#fff');
    mark.setAttribute('font-size', '4');
    mark.setAttribute('x', corner === 'S' ? box.x : box.x + box.width);
    mark.setAttribute('y', corner === 'S' ? box.y + 4 : box.y + box.height);
    if (corner === 'E') mark.setAttribute('text-anchor', 'end');
    return mark;
  };
  // A widget may still draw its chart again after this (for its frame's width, or a copy for the
  // printed column that print shows instead), as a reader who prints at once may catch it: the marks
  // of a figure whose shown drawings hold none move to the drawing now shown.
  const marked = new Map(); // figure → the number of its first picture
  new MutationObserver(() => {
    for (const [figure, n] of marked) {
      const drawings = [...figure.querySelectorAll('svg')].filter((el) => !el.parentElement.closest('svg')
        && getComputedStyle(el).display !== 'none');
      if (!drawings.length || drawings.some((el) => el.textContent.includes('PDFMARK-'))) continue;
      for (const old of figure.querySelectorAll(`text[data-pdfmark="${n}"]`)) old.remove();
      drawings[0].append(svgMark(drawings[0], `PDFMARK-S-${n}`, 'S'), svgMark(drawings[0], `PDFMARK-E-${n}`, 'E'));
    }
  }).observe(document.querySelector('main'), { childList: true, subtree: true, attributes: true });
  return pictures.map(({ figure, figureNumber, picture }, n) => {
    if (!marked.has(figure)) marked.set(figure, n);
    const svgTexts = picture === figure ? 0 : picture.querySelectorAll('text').length;
    if (picture === figure) {
      if (getComputedStyle(figure).position === 'static') figure.style.position = 'relative';
      figure.append(mark(`PDFMARK-S-${n}`, { top: '0', left: '0' }), mark(`PDFMARK-E-${n}`, { bottom: '0', right: '0' }));
    } else {
      picture.append(svgMark(picture, `PDFMARK-S-${n}`, 'S'), svgMark(picture, `PDFMARK-E-${n}`, 'E'));
    }
    const widget = figure.closest('section.widget');
    const label = widget ? `widget ${widget.id}` : (figure.id || figure.className || 'figure');
    const kind = picture === figure ? '' : ' (svg)';
    // A chart drawn twice, for wide and for narrow frames: which drawing this is (one must print, not both).
    const variant = picture === figure ? null : (picture.dataset.first ?? picture.dataset.layout ?? null);
    return { n, figure: figureNumber, variant, name: `${label}${kind}: “${picture.textContent.trim().replace(/\s+/g, ' ').slice(0, 50)}”`,
      svgTexts };
  });
}

const PRINT_WIDTH = 640; // static/js/widgets/widget.js: a figure drawn wider gets a copy for print

const browser = await launch();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // The widgets' pictures come from the server (the in-page Python starts only on a first touch).
  await context.route(/\/pyodide\//, (route) => route.abort());
  const page = await context.newPage();
  for (const slug of slugs) {
    await page.goto(`${BASE_URL}/${slug}/`, { waitUntil: 'load' });
    await page.waitForFunction(() => [...document.querySelectorAll('section.widget[data-widget]:not([data-driver="live"])')]
      .every((w) => w.dataset.ready === 'true' && !w.hasAttribute('aria-busy')), null, { timeout: 30_000 });
    await page.emulateMedia({ media: 'print' });
    // A figure drawn wider than the printed column gets its print copy once its widget is still
    // (widget.js, schedulePrintFigure): wait for every one, or a loaded machine prints both drawings.
    const printCopiesMade = () => page.waitForFunction((printWidth) => [...document.querySelectorAll('section.widget')]
      .every((w) => !w.hasAttribute('aria-busy') && [...w.querySelectorAll('svg.widget-figure')]
        .filter((svg) => !svg.classList.contains('widget-figure-print') && Number(svg.getAttribute('width')) > printWidth)
        .every((svg) => svg.dataset.printCopy === 'true')), PRINT_WIDTH, { timeout: 30_000 });
    await printCopiesMade();
    await page.waitForTimeout(1000); // a widget redrawn for the print layout's width starts again: still so a second later
    await printCopiesMade();
    const figures = await page.evaluate(markFigures);
    // The words of each fold's summary that prints (a <details> prints open), to find them in the PDF.
    const summaries = await page.$$eval('main details > summary', (all) => [...new Set(all
      .filter((summary) => summary.getClientRects().length > 0).map((summary) => summary.textContent.trim()))]);
    await page.pdf({ path: path.join(outDir, `${slug}.pdf`), format: 'A4' });
    await page.emulateMedia({ media: null });
    writeFileSync(path.join(outDir, `${slug}.json`), JSON.stringify({ url: `${BASE_URL}/${slug}/`, figures, summaries }, null, 1));
  }
  await context.close();
} finally {
  await browser.close();
}
