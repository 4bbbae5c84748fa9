// Print each document to a PDF as a reader would (Chromium's print, A4), for test_print.py to measure.
//
//   node tests/browser/print-pdf.mjs OUT_DIR slug...      (BASE_URL from the environment)
//
// Before printing, every figure of the page's main part (each <figure> that is not inside another,
// as print shows them) gets two invisible marks: "PDFMARK-S-<n>" at its top-left corner and
// "PDFMARK-E-<n>" at its bottom-right corner (above a closing caption: see below), white,
// positioned absolutely (so nothing moves). In
// the PDF, the two marks of a figure on one page give its box there; marks on two pages mean it was
// split. OUT_DIR/<slug>.json lists the figures by number, with a name to report them by.
//
// The page is printed as soon as its widgets have drawn their first picture, as a reader who prints
// right away would: printing must not wait for a picture drawn later for the printed column.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BASE_URL, launch } from './lib.mjs';

const [outDir, ...slugs] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });

function markFigures() {
  const shown = (el) => el.getClientRects().length > 0;
  const figures = [...document.querySelectorAll('main figure')].filter((f) => !f.parentElement.closest('figure') && shown(f));
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
  return figures.map((figure, n) => {
    if (getComputedStyle(figure).position === 'static') figure.style.position = 'relative';
    const caption = figure.lastElementChild;
    figure.append(mark(`PDFMARK-S-${n}`, { top: '0', left: '0' }));
    // A widget's figure ends with its summary, which may be longer than a page: the picture above
    // it must be whole, the summary may go on over the page. The end mark then goes below the
    // picture, in an empty block (no height, so margins still collapse through it as before).
    if (caption && caption.matches('figcaption.widget-summary') && caption.previousElementSibling) {
      const end = document.createElement('div');
      Object.assign(end.style, { position: 'relative', height: '0', margin: '0', padding: '0' });
      end.append(mark(`PDFMARK-E-${n}`, { bottom: '0', right: '0' }));
      caption.before(end);
    } else {
      figure.append(mark(`PDFMARK-E-${n}`, { bottom: '0', right: '0' }));
    }
    const widget = figure.closest('section.widget');
    const label = widget ? `widget ${widget.id}` : (figure.id || figure.className || 'figure');
    return { n, name: `${label}: “${figure.textContent.trim().replace(/\s+/g, ' ').slice(0, 50)}”`,
      svgTexts: figure.querySelectorAll('svg text').length };
  });
}

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
    const figures = await page.evaluate(markFigures);
    await page.emulateMedia({ media: null });
    await page.pdf({ path: path.join(outDir, `${slug}.pdf`), format: 'A4' });
    writeFileSync(path.join(outDir, `${slug}.json`), JSON.stringify({ url: `${BASE_URL}/${slug}/`, figures }, null, 1));
  }
  await context.close();
} finally {
  await browser.close();
}
