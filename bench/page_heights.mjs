// Each document's height at 360 px (a phone) and 1280 px, with the widgets drawn by the server (the
// in-page Python is not started), as a reader sees the page before touching it. For
// docs/performance.md; tests/browser/layout.test.mjs holds /mmlu/ to its limit.
//
//   BASE_URL=http://127.0.0.1:8000 node bench/page_heights.mjs [slug...]
import { BASE_URL, launch } from '../tests/browser/lib.mjs';
import { everyWidgetDrawnForItsWidth } from '../tests/browser/widget-helpers.mjs';

const slugs = process.argv.slice(2).length ? process.argv.slice(2) : ['mmlu', 'mmlu-pro', 'scoring-lesson'];
const browser = await launch();
try {
  for (const width of [360, 1280]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    await context.route(/\/pyodide\//, (route) => route.abort());
    const page = await context.newPage();
    for (const slug of slugs) {
      await page.goto(`${BASE_URL}/${slug}/`);
      await everyWidgetDrawnForItsWidth(page);
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      console.log(`/${slug}/ at ${width} px: ${height.toLocaleString('en')} px`);
    }
    await context.close();
  }
} finally {
  await browser.close();
}
