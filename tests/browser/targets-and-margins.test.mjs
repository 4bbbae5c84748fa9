// Layout checks on the three documents: at 360 px every control in the page's main part (inputs,
// selects, buttons, text areas, disclosure summaries) is at least 24 px tall (WCAG 2.5.8); at
// 1280 px, where margin notes float beside the text, no note pushes the reading column apart: the
// largest vertical gap between consecutive blocks of the column stays under 100 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, launch, screenshot } from './lib.mjs';

const PAPERS = ['mmlu', 'mmlu-pro', 'scoring-lesson'];
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

async function pageAt(width) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  await context.route(/\/pyodide\//, (route) => route.abort()); // the server draws every picture
  return [context, await context.newPage()];
}

test('every control is at least 24 px tall at 360 px', async () => {
  const [context, page] = await pageAt(360);
  const small = [];
  for (const paper of PAPERS) {
    await page.goto(`${BASE_URL}/${paper}/`);
    const found = await page.$$eval('main :is(input, select, button, textarea, summary)', (els) => els
      .filter((el) => el.type !== 'hidden' && el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden')
      .map((el) => ({ what: `${el.tagName.toLowerCase()}${el.type ? `[${el.type}]` : ''} ${el.id || el.textContent.trim().slice(0, 30)}`,
        height: el.getBoundingClientRect().height })));
    assert.ok(found.length > 10, `${paper}: only ${found.length} controls found`);
    small.push(...found.filter((c) => c.height < 23.99).map((c) => `${paper}: ${c.what} is ${c.height.toFixed(1)} px tall`));
  }
  await context.close();
  assert.deepEqual(small, []);
});

test('margin notes leave no gap in the reading column at 1280 px', async () => {
  const [context, page] = await pageAt(1280);
  for (const paper of PAPERS) {
    await page.goto(`${BASE_URL}/${paper}/`);
    const found = await page.evaluate(() => {
      const notes = [...document.querySelectorAll('main .margin-note')].filter((n) => getComputedStyle(n).float !== 'none');
      // The column's blocks, top to bottom: each gap is from the lowest bottom so far to the next top.
      const blocks = [...document.querySelectorAll('main .paper > :not(.paper-section), main .paper-section > :not(.section-body), main .section-body > *')]
        .filter((el) => el.getClientRects().length && getComputedStyle(el).float === 'none')
        .map((el) => ({ el, box: el.getBoundingClientRect() }))
        .sort((a, b) => a.box.top - b.box.top);
      let worst = { gap: 0 };
      let bottom = blocks[0].box.bottom;
      for (const { el, box } of blocks.slice(1)) {
        if (box.top - bottom > worst.gap) worst = { gap: box.top - bottom, before: el.id || el.className || el.tagName };
        bottom = Math.max(bottom, box.bottom);
      }
      return { notes: notes.length, worst };
    });
    assert.ok(found.notes > 0, `${paper}: no margin note floats beside the text at 1280 px`);
    assert.ok(found.worst.gap < 100, `${paper}: a gap of ${Math.round(found.worst.gap)} px in the column, before ${found.worst.before}`);
  }
  await page.goto(`${BASE_URL}/mmlu/#abstract`);
  await screenshot(page, 'margin-notes-1280');
  await context.close();
});
