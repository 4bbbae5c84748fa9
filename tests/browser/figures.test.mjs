// Figures a reader can see and print: every widget prints as its picture with its address, the
// page does not shift as its scripts arrive, prompt parts stay distinct in forced colours, and the
// theme button's name is words only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { BASE_URL, launch } from './lib.mjs';
import { checkPrinted } from './widget-helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

test('printing the paper keeps every widget as its picture, summary and address', async () => {
  await checkPrinted(browser, 'mmlu', 8);
});

// A 360 px wide browser context whose pages add up their layout shifts in window.__shift.
async function shiftCountingContext() {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
  await context.addInitScript(() => {
    window.__shift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__shift += entry.value;
    }).observe({ type: 'layout-shift', buffered: true });
  });
  return context;
}

test('nothing shifts while the widget page loads (cumulative layout shift under 0.05 at 360 px)', async () => {
  const context = await shiftCountingContext();
  for (const url of ['/mmlu/widgets/chance-explorer', '/embed/mmlu/release-gate', '/mmlu/']) {
    const page = await context.newPage();
    await page.goto(`${BASE_URL}${url}`);
    await page.waitForSelector('.theme-toggle:not([hidden]), body.embed', { timeout: 30_000 });
    await page.waitForTimeout(1500);
    const shift = await page.evaluate(() => window.__shift);
    assert.ok(shift < 0.05, `${url}: layout shift ${shift.toFixed(3)}`);
    await page.close();
  }
  await context.close();
});

// Serves BASE_URL through a local proxy that sends `page` in two pieces, holding the second (from
// its first figure on) until the test calls `release()`, as a slow connection or a busy server does;
// everything else passes through. The test, not a timer, decides when the figure arrives: on a busy
// machine a fixed pause could end before the page had painted its first piece.
async function proxyHoldingFigure(page) {
  let release;
  const released = new Promise((resolve) => { release = resolve; });
  const server = http.createServer(async (request, response) => {
    const upstream = await fetch(`${BASE_URL}${request.url}`);
    const body = Buffer.from(await upstream.arrayBuffer());
    response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' });
    if (request.url !== page) return response.end(body);
    const cut = body.indexOf('<figure class="widget-body">');
    assert.ok(cut > 0, `${page} has a widget figure`);
    response.write(body.subarray(0, cut));
    released.then(() => response.end(body.subarray(cut)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}${page}`,
    release,
    close: () => { release(); server.closeAllConnections(); server.close(); },
  };
}

test('a widget painted before its figure arrives does not move its controls when the figure comes', async (t) => {
  const proxy = await proxyHoldingFigure('/embed/mmlu/release-gate');
  t.after(proxy.close);
  const context = await shiftCountingContext();
  const page = await context.newPage();
  await page.goto(proxy.url, { waitUntil: 'commit' });
  await page.waitForSelector('.widget-title');
  await page.waitForTimeout(500); // painted while the rest of the page is still on its way
  await page.evaluate(() => new Promise((painted) => requestAnimationFrame(() => requestAnimationFrame(painted))));
  assert.equal(await page.isVisible('form.widget-controls'), false, 'the controls wait for the figure above them');
  proxy.release();
  await page.waitForSelector('form.widget-controls', { state: 'visible' });
  await page.waitForTimeout(1000);
  const shift = await page.evaluate(() => window.__shift);
  assert.ok(shift < 0.05, `layout shift ${shift.toFixed(3)} when the figure arrived`);
  await context.close();
});

test('prompt parts and their legend swatches stay distinct in forced colours', async () => {
  const page = await browser.newPage();
  await page.emulateMedia({ forcedColors: 'active' });
  await page.goto(`${BASE_URL}/mmlu/widgets/prompt-anatomy`);
  const swatches = await page.$$eval('.prompt-legend .swatch', (els) => els.map((el) => getComputedStyle(el).backgroundColor));
  assert.equal(swatches.length, 5);
  assert.equal(new Set(swatches).size, 5, `swatch colours: ${swatches.join(', ')}`);
  // Read once the widget's own style sheet applies (a page under load may not have it at 'load').
  const distinct = () => new Set([...document.querySelectorAll('.prompt-text .part')]
    .map((el) => getComputedStyle(el).backgroundColor)).size >= 4;
  const parts = await page.waitForFunction(distinct, null, { timeout: 15_000 }).then(() => true, () => false);
  assert.ok(parts, 'header, question, options and the answer cue look different');
  await page.close();
});

test('the theme button is named in words, and says whether it is on', async () => {
  const page = await browser.newPage();
  await page.goto(`${BASE_URL}/mmlu/`);
  const button = page.getByRole('button', { name: 'Dark mode', exact: true });
  await button.waitFor();
  assert.equal(await button.getAttribute('aria-pressed'), 'false');
  await button.click();
  assert.equal(await button.getAttribute('aria-pressed'), 'true');
  await page.close();
});

test('each widget shows its picture above its controls, at 1280 and 360 px', async () => {
  const names = ['chance-explorer', 'calibration-bars', 'scaling-plot', 'group-bars', 'subject-bars',
    'prompt-anatomy', 'release-gate'];
  for (const width of [1280, 360]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    await context.route(/\/pyodide\//, (route) => route.abort());
    const page = await context.newPage();
    for (const name of names) {
      await page.goto(`${BASE_URL}/mmlu/widgets/${name}`);
      const [figureTop, controlsTop] = await page.$eval('section.widget', (s) => [
        s.querySelector('.widget-body').getBoundingClientRect().top,
        s.querySelector('.widget-controls').getBoundingClientRect().top]);
      assert.ok(figureTop < controlsTop, `${name} at ${width} px: picture at ${figureTop}, controls at ${controlsTop}`);
    }
    await context.close();
  }
});

test('every equation symbol is a tap target of at least 24 × 24 px', async () => {
  const page = await browser.newPage({ viewport: { width: 360, height: 800 } });
  await page.goto(`${BASE_URL}/mmlu/`);
  const boxes = await page.$$eval('math .sym', (els) => els.map((el) => {
    const box = el.getBoundingClientRect();
    // The box must also be reachable: a point 10 px above the symbol's centre still lands on it.
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2 - 10);
    return { id: el.id, width: box.width, height: box.height, visible: box.bottom > 0 && box.top < innerHeight,
             reachable: Boolean(hit && (hit === el || el.contains(hit))) };
  }));
  assert.ok(boxes.length > 100);
  const names = await page.$$eval('math .sym', (els) => els.filter((el) => !(el.getAttribute('aria-label') || '').trim()).length);
  assert.equal(names, 0, 'every focusable symbol has a name of its own for screen readers');
  const small = boxes.filter((b) => b.width < 24 || b.height < 24);
  assert.deepEqual(small, [], 'symbols under 24 px');
  for (const b of boxes.filter((x) => x.visible)) assert.ok(b.reachable, `${b.id} is clipped`);
  await page.close();
});

test('at 320 px worked numbers break into steps, code wraps, and any remaining scroller is keyboard-reachable', async () => {
  const page = await browser.newPage({ viewport: { width: 320, height: 800 } });
  await page.goto(`${BASE_URL}/mmlu/`);
  await page.waitForFunction(() => document.querySelector('.theme-toggle:not([hidden])'));
  const report = await page.evaluate(() => {
    const wide = (el) => el.scrollWidth > el.clientWidth + 1;
    const inline = [...document.querySelectorAll('.math-inline')];
    return {
      inline: inline.length,
      clippedInline: inline.filter(wide).map((el) => el.textContent.trim()),
      clippedCode: [...document.querySelectorAll('.snippet pre')].filter(wide).map((el) => el.textContent.slice(0, 60)),
      unreachable: [...document.querySelectorAll('.equation, .math-inline, main table')]
        .filter((el) => wide(el) && el.tabIndex < 0).map((el) => el.textContent.trim().slice(0, 60)),
      steps: [...document.querySelectorAll('.math-inline')].some((el) => el.textContent.includes('0.375')),
    };
  });
  assert.ok(report.inline > 50);
  assert.ok(report.steps, 'the weighted-average answer 0.375 is on the page');
  assert.deepEqual(report.clippedCode, [], 'code lines cut off at 320 px');
  assert.deepEqual(report.unreachable, [], 'scrollers a keyboard cannot reach');
  assert.ok(report.clippedInline.length <= 3, `inline formulas still scrolling at 320 px: ${report.clippedInline.join(' | ')}`);
  await page.close();
});
