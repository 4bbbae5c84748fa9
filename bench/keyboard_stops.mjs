// Tab stops from the table of contents to each section's first figure control, on every document,
// at 1280 px: following the section's "Skip to the figure" link, and with Tab alone (every glossary
// term, symbol and citation before the figure is a stop). Also the stops from the top of the page to
// the first figure control with Tab alone. For docs/performance.md.
//
//   BASE_URL=http://127.0.0.1:8000 node bench/keyboard_stops.mjs [slug...]
import { BASE_URL, launch } from '../tests/browser/lib.mjs';
import { tabsToFirstControl } from '../tests/browser/keyboard.mjs';

const slugs = process.argv.slice(2).length ? process.argv.slice(2) : ['mmlu', 'mmlu-pro', 'scoring-lesson'];
const browser = await launch();
try {
  // Reduced motion: the contents' links jump to their section at once rather than scrolling there.
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  await page.route(/\/pyodide\//, (route) => route.abort());
  for (const slug of slugs) {
    await page.goto(`${BASE_URL}/${slug}/`);
    let fromTop = 0;
    for (; fromTop < 2000; fromTop += 1) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement.matches('section.widget :is(input, select, textarea, button)'))) break;
    }
    console.log(`/${slug}/: from the top of the page, the first figure control is Tab stop ${fromTop + 1}`);
    const sections = await page.$$eval('section.paper-section:has(.figure-skip)', (all) => all.map((s) => s.id));
    for (const section of sections) {
      const skipping = await tabsToFirstControl(page, section, { skip: true });
      const tabbing = await tabsToFirstControl(page, section, { skip: false });
      console.log(`  §${section}: ${skipping.stops} Tab stops to ${skipping.widget}'s first control by its link, ${tabbing.stops} by Tab alone`);
    }
  }
} finally {
  await browser.close();
}
