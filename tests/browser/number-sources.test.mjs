// "Show sources of numbers" in headless Chromium: off by default; the switch marks the numbers without
// a reload and puts its state in the URL; a mark opens its ledger entry on hover, keyboard focus and
// tap, and Escape closes it; axe passes; a reload keeps the state; printed, the page ends with the
// appendix of entries. Screenshots at 360 and 1280 px, light and dark, with the switch on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, BASE_URL, axeViolations, screenshot, watchConsole } from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const marks = (page) => page.locator('.number-mark');

for (const slug of ['mmlu', 'mmlu-pro', 'scoring-lesson']) {
  test(`${slug}: the switch marks every ledger number in place; hover, focus, Escape; reload; print`, { timeout: 180000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchConsole(page);
    await page.goto(`${BASE_URL}/${slug}/`);
    assert.equal(await marks(page).count(), 0, 'off by default');
    const toggle = page.getByRole('switch', { name: 'Show sources of numbers' });
    assert.equal(await toggle.getAttribute('aria-checked'), 'false');
    await page.evaluate(() => { window.sameDocument = true; }); // gone if the page were loaded again

    await toggle.click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get('sources') === 'on');
    await marks(page).first().waitFor();
    assert.equal(await page.evaluate(() => window.sameDocument), true, 'switched without a reload');
    assert.equal(await toggle.getAttribute('aria-checked'), 'true');
    // The same marks as the server renders for ?sources=on (the server test checks each against the ledger).
    const served = await page.evaluate(async () => {
      const html = await (await fetch(location.href)).text();
      return new DOMParser().parseFromString(html, 'text/html').querySelectorAll('.number-mark').length;
    });
    const count = await marks(page).count();
    assert.ok(count > 10 && count === served, `${count} marks, the server renders ${served}`);
    const withEntry = await page.evaluate(() => [...document.querySelectorAll('.number-mark')].filter((mark) => {
      const tip = document.getElementById(mark.dataset.tip);
      return tip?.getAttribute('role') === 'tooltip' && document.getElementById(`number-${mark.dataset.entry}`)
        && mark.getAttribute('aria-describedby') === `${tip.id}-text`;
    }).length);
    assert.equal(withEntry, count, 'each mark has its popover and its appendix entry');

    const mark = page.locator('.section-body a.number-mark').first();
    const tip = page.locator(`#${await mark.getAttribute('data-tip')}`);
    await mark.scrollIntoViewIfNeeded();
    await mark.hover();
    await tip.waitFor({ state: 'visible' });
    assert.match(await tip.textContent(), /Source:|Computed:/);
    await page.keyboard.press('Escape');
    await tip.waitFor({ state: 'hidden' });
    await page.mouse.move(1, 1);
    await mark.focus();
    await tip.waitFor({ state: 'visible' });
    await page.keyboard.press('Escape');
    await tip.waitFor({ state: 'hidden' });
    // The switch, the marks and their popovers (page.test.mjs and each document's test check the whole page).
    assert.deepEqual(await axeViolations(page, { within: ['#sources-switch', '.number-mark', '[id^="tip-number-"]'] }), []);

    await page.reload();
    assert.equal(await page.getByRole('switch', { name: 'Show sources of numbers' }).getAttribute('aria-checked'), 'true');
    assert.equal(await marks(page).count(), count, 'a reload keeps the state (the server renders the marks)');
    await page.emulateMedia({ media: 'print' });
    const appendix = page.locator('#number-sources');
    assert.ok(await appendix.isVisible(), 'printed, the page ends with the appendix');
    assert.ok(await page.evaluate(() => Boolean(document.querySelector('.paper')
      .compareDocumentPosition(document.querySelector('#number-sources')) & Node.DOCUMENT_POSITION_FOLLOWING)), 'after the article');
    assert.ok(await page.locator('.number-entries li').count() > 10);
    await page.emulateMedia({ media: 'screen' });

    await page.getByRole('switch', { name: 'Show sources of numbers' }).press('Space');
    await page.waitForFunction(() => !location.search.includes('sources=on'));
    assert.equal(await marks(page).count(), 0, 'switched off again');
    assert.equal(await page.locator('#number-sources').count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });
}

test('a tap opens a number\'s entry and a second tap closes it; screenshots light and dark', { timeout: 180000 }, async () => {
  for (const [width, height] of [[360, 740], [1280, 900]]) {
    for (const scheme of ['light', 'dark']) {
      const context = await browser.newContext({ viewport: { width, height }, hasTouch: width < 400, isMobile: width < 400, colorScheme: scheme });
      const page = await context.newPage();
      await page.goto(`${BASE_URL}/mmlu/?sources=on`);
      // The first mark the reader sees (on a phone, those in a fold wait until it is opened).
      const mark = page.locator('#introduction .section-body a.number-mark:visible').first();
      await mark.scrollIntoViewIfNeeded();
      const tip = page.locator(`#${await mark.getAttribute('data-tip')}`);
      if (width < 400) await mark.tap(); else await mark.hover();
      await tip.waitFor({ state: 'visible' });
      assert.equal(new URL(page.url()).hash, '', 'a tap does not follow the link');
      await screenshot(page, `number-sources-${width}-${scheme}`);
      await page.locator('.paper > .title-block').scrollIntoViewIfNeeded();
      await screenshot(page, `number-sources-switch-${width}-${scheme}`);
      if (width < 400) {
        await mark.scrollIntoViewIfNeeded();
        if (!(await tip.isVisible())) await mark.tap();
        await mark.tap();
        await tip.waitFor({ state: 'hidden' });
      }
      await context.close();
    }
  }
});

// Issue 40: MMLU-Pro says once, beside the switch, that some of its figures come only from a review
// of the paper (unchecked); its prose no longer says so number by number; the switch marks each such
// number with a dagger; a popover's title names the work and the place, not an entry's number.
test('MMLU-Pro: unchecked figures are said once and marked; a popover names the work and the place', { timeout: 180000 }, async () => {
  for (const [width, scheme] of [[360, 'dark'], [1280, 'light']]) {
    const context = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: scheme, hasTouch: width < 400, isMobile: width < 400 });
    const page = await context.newPage();
    await page.goto(`${BASE_URL}/mmlu-pro/?sources=on`);
    const note = page.locator('#numbers-note');
    assert.ok(await note.isVisible(), 'the note is shown beside the switch');
    assert.match(await note.innerText(), /only through a secondary review of the paper[\s\S]*unchecked[\s\S]*dagger \(†\)/);
    const prose = await page.$$eval('.section-body > p, .section-body > ul > li', (nodes) => nodes.map((n) => n.textContent).join('\n'));
    assert.doesNotMatch(prose, /\ba review\b|review of the paper|could not be checked/i, 'the prose does not repeat it');
    const unchecked = page.locator('.number-mark.number-unchecked');
    assert.ok(await unchecked.count() > 10, `${await unchecked.count()} unchecked marks`);
    assert.equal(await unchecked.first().evaluate((el) => getComputedStyle(el, '::after').content), '"†"');
    const titles = await page.$$eval('[id^="tip-number-"] .tip-title', (nodes) => nodes.map((n) => n.textContent));
    assert.ok(titles.length > 10);
    assert.deepEqual(titles.filter((t) => /entry \d/.test(t)), [], 'no title names an entry by its number');
    assert.ok(titles.includes('72.6: Wang et al. (2024), Table 2'), titles.slice(0, 5).join(' | '));
    const mark = page.locator('.section-body a.number-mark.number-unchecked').first();
    await mark.scrollIntoViewIfNeeded();
    const tip = page.locator(`#${await mark.getAttribute('data-tip')}`);
    if (width < 400) await mark.tap(); else await mark.hover();
    await tip.waitFor({ state: 'visible' });
    assert.match(await tip.locator('.tip-title').textContent(), /Wang et al\. \(2024\), .* \(unchecked: only a secondary review gives it\)$/);
    await screenshot(page, `number-sources-unchecked-${width}-${scheme}`);
    await page.locator('.paper > .title-block').scrollIntoViewIfNeeded();
    await screenshot(page, `number-sources-note-${width}-${scheme}`);
    await context.close();
  }
});
