// Citation previews in headless Chromium, on every document: each citation in the prose and each
// quote's source names a preview that exists (a test counts both); previews open on hover, keyboard
// focus and tap (a tap does not leave the page), close on Escape; the Sources list links back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, BASE_URL, axeViolations, screenshot, watchConsole } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const CITATIONS = '.section-body a.cite, .paper-quote figcaption a, .section-tools a.original-link';
// A citation written as text: an arXiv id, "Name et al.", "Name (2019)" or "(Name, 2019)".
const WRITTEN_CITATION = String.raw`arXiv[:\s]*\d{4}\.\d{4,5}|\b[A-Z][A-Za-z-]+ et al\.|\b[A-Z][A-Za-z-]+ \((?:19|20)\d\d\)|\([A-Z][A-Za-z-]+(?: et al\.)?,? (?:19|20)\d\d\)`;

// Every citation the prose and the quotes' source lines write, linked or not: each must be inside a
// citation (a.cite, which has its preview) or, in a quote's source line, beside that line's citation.
function writtenCitations(pattern) {
  const roots = document.querySelectorAll('.paper-section:not(.paper-sources) .section-body, .paper-quote figcaption');
  const found = [];
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (parent.closest('pre, code, .widget-wrap, .widget, .tips')) continue;
      for (const match of node.data.matchAll(new RegExp(pattern, 'g'))) {
        const previewed = parent.closest('a.cite') || parent.closest('.paper-quote figcaption')?.querySelector('a.cite');
        found.push({ text: match[0], previewed: Boolean(previewed) });
      }
    }
  }
  return found;
}

for (const slug of ['mmlu', 'mmlu-pro', 'scoring-lesson']) {
  test(`${slug}: every citation has a preview; hover, focus, Escape; back-links`, { timeout: 120000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchConsole(page);
    await page.goto(`${BASE_URL}/${slug}/`);
    const counts = await page.evaluate((selector) => {
      const citations = [...document.querySelectorAll(selector)];
      const external = [...document.querySelectorAll('.paper-section:not(.paper-sources) .section-body a[href^="http"]')]
        .filter((a) => !a.closest('.widget') && new URL(a.href).origin !== location.origin);
      const withPreview = citations.filter((a) => {
        const tip = document.getElementById(a.dataset.tip || '');
        return tip && tip.getAttribute('role') === 'tooltip' && tip.querySelector('.tip-work a')
          && a.getAttribute('aria-describedby') === `${tip.id}-text`;
      });
      return { citations: citations.length, external: external.length, notCite: external.filter((a) => !a.matches('.cite')).length,
        withPreview: withPreview.length, sources: document.querySelectorAll('.source-list > li[id^="source-"]').length,
        backs: [...document.querySelectorAll('.cite-back')].every((a) => document.getElementById(a.hash.slice(1))) };
    }, CITATIONS);
    const written = await page.evaluate(writtenCitations, WRITTEN_CITATION);
    assert.ok(counts.citations > 0);
    assert.deepEqual(written.filter((c) => !c.previewed).map((c) => c.text), [], 'every written citation has its preview');
    assert.equal(counts.notCite, 0, 'every link to a work in the prose is a citation');
    assert.equal(counts.withPreview, counts.citations, 'every citation has its preview');
    assert.ok(counts.sources > 0 && counts.backs, 'numbered sources, back-links that land');

    const first = page.locator('.section-body a.cite, .paper-quote figcaption a.cite').first();
    const tipId = await first.getAttribute('data-tip');
    const tip = page.locator(`#${tipId}`);
    await first.scrollIntoViewIfNeeded();
    await first.hover();
    await tip.waitFor({ state: 'visible' });
    assert.match(await tip.textContent(), /This page takes|Source \d+ in the list/);
    await screenshot(page, `citation-${slug}-hover`);
    await page.keyboard.press('Escape');
    await tip.waitFor({ state: 'hidden' });
    await page.mouse.move(1, 1);

    const quote = page.locator('.paper-quote figcaption a.cite').first();
    if (await quote.count()) {
      await quote.focus();
      const quoteTip = page.locator(`#${await quote.getAttribute('data-tip')}`);
      await quoteTip.waitFor({ state: 'visible' });
      await page.keyboard.press('Escape');
      await quoteTip.waitFor({ state: 'hidden' });
    }
    // The citations, their popovers and the list of sources (page.test.mjs and each document's test check the whole page).
    assert.deepEqual(await axeViolations(page, { within: ['a.cite', '[id^="tip-source-"]', '.source-list'] }), []);
    assert.deepEqual(problems, []);
    await context.close();
  });
}

test('a tap opens a citation preview without leaving the page; a second tap closes it', { timeout: 120000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  await page.goto(`${BASE_URL}/mmlu/`);
  const cite = page.locator('.section-body a.cite').first();
  // On a phone it waits in a fold (the math, a note): the reader opens that first.
  await cite.locator('xpath=ancestor::details[contains(@class, "phone-fold")]').locator(':scope > summary').tap();
  await cite.scrollIntoViewIfNeeded();
  await cite.tap();
  const tip = page.locator(`#${await cite.getAttribute('data-tip')}`);
  await tip.waitFor({ state: 'visible' });
  assert.equal(new URL(page.url()).pathname, '/mmlu/');
  await screenshot(page, 'citation-tap-360');
  await cite.tap();
  await tip.waitFor({ state: 'hidden' });
  await context.close();
});
