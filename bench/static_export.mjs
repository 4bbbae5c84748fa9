// The static export (engine/export.py) as a reader meets it: what a document costs before and
// after the first interaction, and how long that first redraw takes.
//
//   python3 -m engine.export /tmp/export && mkdir -p /tmp/host/courses/ml && ln -s /tmp/export /tmp/host/courses/ml/papers
//   (cd /tmp/host && python3 -m http.server 8765 --bind 127.0.0.1) &
//   EXPORT_URL=http://127.0.0.1:8765/courses/ml/papers/ node bench/static_export.mjs [document]
//
// Bytes are the response bodies as sent (http.server sends no compression: a host that compresses
// sends fewer), counted from a fresh browser profile: "before" is the document with everything it
// loads by itself; "after" adds what the first change of a widget fetches (Pyodide, the wheel).
import { launch } from '../tests/browser/lib.mjs';

const EXPORT_URL = process.env.EXPORT_URL || 'http://127.0.0.1:8765/courses/ml/papers/';
const slug = process.argv[2] || 'mmlu';

const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
let bytes = 0;
page.on('requestfinished', async (request) => {
  const sizes = await request.sizes().catch(() => null);
  if (sizes) bytes += sizes.responseBodySize;
});
await page.goto(`${EXPORT_URL}${slug}/`, { waitUntil: 'networkidle' });
const before = bytes;
const widget = page.locator('section.widget[data-driver="worker"]').first();
await widget.scrollIntoViewIfNeeded();
const control = widget.locator('form.widget-controls :is(input[type="number"], select):visible').first();
const started = performance.now();
await control.focus();
await page.keyboard.press('ArrowUp');
await page.waitForFunction((el) => Number(el.dataset.renders || 0) > 0, await widget.elementHandle(), { timeout: 120_000 });
const redrawMs = performance.now() - started;
await page.waitForLoadState('networkidle');
const after = bytes;
const mib = (n) => `${(n / 2 ** 20).toFixed(2)} MiB (${n.toLocaleString('en')} bytes)`;
console.log(`${slug}: before the first interaction ${mib(before)}; after it ${mib(after)}; `
  + `first redraw ${Math.round(redrawMs)} ms after the key (${await widget.getAttribute('data-widget')}, Pyodide cold)`);
await browser.close();
