// A keyboard reader's way from the table of contents to a section's first figure control, shared by
// tests/browser/layout.test.mjs (which asserts it) and bench/keyboard_stops.mjs (which counts it with
// and without the section's links to its figures).
import assert from 'node:assert/strict';
import { screenshot } from './lib.mjs';

// Focus the contents' link to `section`, press Enter, then Tab until a control of a widget has focus;
// with `skip`, Enter on a "Skip to the figure" link when Tab reaches one (it must show where it is).
// `shot`: a screenshot's name, taken while the first such link is focused. Returns the Tab presses
// and the widget whose control was reached.
export async function tabsToFirstControl(page, section, { skip, shot = null, most = 400 }) {
  await page.locator(`.toc a[href="#${section}"]`).focus();
  await page.keyboard.press('Enter');
  for (let stops = 1; stops <= most; stops += 1) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement;
      const box = el.getBoundingClientRect();
      return {
        skip: el.matches('a.figure-skip') ? el.textContent : null,
        shown: box.width > 10 && box.height > 10 && box.top >= 0 && box.bottom <= innerHeight,
        widget: el.matches('section.widget :is(input, select, textarea, button)') ? el.closest('section.widget').id : null,
      };
    });
    if (focused.widget) return { stops, widget: focused.widget };
    if (skip && focused.skip) {
      assert.ok(focused.shown, `the link “${focused.skip}” shows where it is focused`);
      if (shot) await screenshot(page, shot);
      await page.keyboard.press('Enter');
    }
  }
  return { stops: Infinity, widget: null };
}
