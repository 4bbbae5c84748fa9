// A teacher's page on another origin (a tiny Node server on another port) embeds two widgets by
// iframe. They must render, work inside the frame (the server first, then their own Pyodide worker,
// started on the first input), report their height
// to the parent, and be resized by the optional embed-resize.js script. A widget page that is not
// under /embed/ must refuse to be framed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { axeViolations, launch, BASE_URL, watchConsole, screenshot, summaryText } from './lib.mjs';
import { redrawnForWidth, settle } from './widget-helpers.mjs';

const TEACHER_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>A lesson on benchmark noise</title></head>
<body>
<main>
<h1>Is a score above chance?</h1>
<p>Try the widget below, then read on.</p>
<iframe id="explorer" src="${BASE_URL}/embed/mmlu/chance-explorer?n=100&amp;score=0.3" title="Chance explorer" width="100%" height="150" style="border:0"></iframe>
<h2>What the model reads</h2>
<iframe id="anatomy" src="${BASE_URL}/embed/mmlu/prompt-anatomy?subject=virology&amp;shots=0" title="Prompt anatomy" width="100%" height="150" style="border:0"></iframe>
<h2>Not embeddable</h2>
<iframe id="refused" src="${BASE_URL}/mmlu/widgets/chance-explorer" title="A page that refuses framing" width="100%" height="150"></iframe>
</main>
<script src="${BASE_URL}/static/js/embed-resize.js"></script>
</body>
</html>`;

let server;
let teacherUrl;
let browser;

before(async () => {
  server = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(TEACHER_PAGE);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  teacherUrl = `http://127.0.0.1:${server.address().port}/lesson.html`;
  browser = await launch();
});

after(async () => {
  await browser.close();
  await new Promise((resolve) => server.close(resolve));
});

function frameOf(page, url) {
  return page.frames().find((f) => f.url().startsWith(url));
}

test('a page on another origin embeds two widgets that render, work and report their height', async () => {
  assert.notEqual(new URL(teacherUrl).origin, new URL(BASE_URL).origin);
  const page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
  const problems = watchConsole(page);
  await page.goto(teacherUrl);

  const explorer = frameOf(page, `${BASE_URL}/embed/mmlu/chance-explorer`);
  const anatomy = frameOf(page, `${BASE_URL}/embed/mmlu/prompt-anatomy`);
  assert.ok(explorer && anatomy, 'both widget frames load');
  for (const [frame, name] of [[explorer, 'chance-explorer'], [anatomy, 'prompt-anatomy']]) {
    await frame.waitForSelector('section.widget[data-ready="true"]', { timeout: 90_000 });
    // The server's two first pictures (a phone's and a wider one) give way to one drawn for the frame
    // (and, where that is wider than the printed column, the server's kept aside as its print copy).
    await redrawnForWidth(frame, name);
    assert.equal(await frame.locator('svg.widget-figure:not(.widget-figure-print)').count(), 1);
  }

  // The frames report their height; embed-resize.js applies it to each iframe.
  for (const id of ['explorer', 'anatomy']) {
    await page.waitForFunction((i) => Number(document.getElementById(i).dataset.reportedHeight) > 150, id);
    const [attribute, reported] = await page.$eval(`#${id}`, (f) => [Number(f.height), Number(f.dataset.reportedHeight)]);
    assert.equal(attribute, Math.round(reported));
  }
  // The frame reports a new height one rendering frame after it changes: wait for it to arrive.
  const frameHeight = await explorer.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
  await page.waitForFunction((h) => Math.abs(Number(document.getElementById('explorer').height) - h) <= 2, frameHeight);

  // The widget works inside the frame: the worker in the frame redraws on a keyboard change.
  // An embed starts its worker on the reader's first input; the server answers that input at once.
  const renders = await explorer.evaluate(() => Number(document.querySelector('section.widget').dataset.renders || 0));
  await explorer.focus('#w-chance-explorer-n');
  await explorer.fill('#w-chance-explorer-n', '1000');
  await page.keyboard.press('Tab');
  await settle(explorer, 'chance-explorer', renders);
  assert.match(await explorer.locator('.widget-summary').evaluate(summaryText), /can be told apart from guessing/);
  assert.match(await explorer.locator('[data-share="iframe"]').inputValue(), /\/embed\/mmlu\/chance-explorer\?n=1000"/);

  // The prompt anatomy (text from the server) works in its frame too: one worked example more.
  const anatomyRenders = await anatomy.evaluate(() => Number(document.querySelector('section.widget').dataset.renders || 0));
  await anatomy.locator('details.widget-more > summary').click(); // the shots are under "More settings"
  await anatomy.focus('#w-prompt-anatomy-shots-range');
  await page.keyboard.press('ArrowRight');
  await settle(anatomy, 'prompt-anatomy', anatomyRenders);
  assert.equal(await anatomy.locator('.prompt-text .part-shot').count(), 1);
  assert.match(await anatomy.locator('.prompt-text .part-header').innerText(), /about virology\./);
  const grown = Number(await anatomy.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height)));
  await page.waitForFunction((h) => Math.abs(Number(document.getElementById('anatomy').height) - h) <= 2, grown);

  // A widget page outside /embed/ is refused by the browser (frame-ancestors 'none').
  const refused = await (await page.$('#refused')).contentFrame();
  assert.ok(!refused.url().startsWith(BASE_URL), `the browser showed ${refused.url()} in a frame`);
  assert.equal(await refused.locator('section.widget').count(), 0);

  for (const frame of [explorer, anatomy]) {
    assert.deepEqual(await axeViolations(frame), [], `axe-core on ${frame.url()}`);
  }
  await page.locator('#anatomy').scrollIntoViewIfNeeded();
  await screenshot(page, 'embed-teacher-page');
  const unexpected = problems.filter((p) => !/Refused to display|frame-ancestors|X-Frame-Options/.test(p));
  assert.deepEqual(unexpected, []);
  await page.close();
});

test('axe-core finds nothing on any embed page, nor on the widget gallery', async () => {
  const names = ['chance-explorer', 'calibration-bars', 'scaling-plot', 'group-bars', 'subject-bars',
    'prompt-anatomy', 'release-gate', 'live-scoring'];
  // The pages' own scripts are not loaded (each would start Pyodide): this checks the
  // server-rendered markup; the enhanced widgets are checked in widgets.test.mjs and above.
  const context = await browser.newContext({ viewport: { width: 700, height: 900 } });
  await context.route(/\/static\/js\//, (route) => route.abort());
  const page = await context.newPage();
  for (const path of [...names.map((name) => `/embed/mmlu/${name}`), '/mmlu/widgets/']) {
    await page.goto(`${BASE_URL}${path}`);
    assert.deepEqual(await axeViolations(page), [], `axe-core on ${path}`);
  }
  await context.close();
});

test('a lesson page with three embeds starts a Pyodide only for the widget a reader uses', async () => {
  const lesson = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Three widgets</title></head><body><main>
      ${['chance-explorer', 'calibration-bars', 'group-bars'].map((name) => `<iframe src="${BASE_URL}/embed/mmlu/${name}"
        title="${name}" width="100%" height="400"></iframe>`).join('')}</main></body></html>`);
  });
  await new Promise((resolve) => lesson.listen(0, '127.0.0.1', resolve));
  const page = await browser.newPage();
  const started = [];
  page.on('request', (r) => { if (/pyodide\.asm\.wasm/.test(r.url())) started.push(r.url()); });
  await page.goto(`http://127.0.0.1:${lesson.address().port}/`);
  const frames = () => page.frames().filter((f) => f.url().includes('/embed/mmlu/'));
  await page.waitForFunction(() => document.querySelectorAll('iframe').length === 3);
  for (const frame of frames()) await frame.waitForSelector('section.widget[data-ready="true"]', { timeout: 60_000 });
  assert.equal(started.length, 0, 'no Pyodide starts before a reader touches a widget');
  const explorer = frames().find((f) => f.url().includes('chance-explorer'));
  await explorer.fill('#w-chance-explorer-n', '1000');
  await explorer.waitForFunction(() => /can be told apart/.test(document.querySelector('.widget-summary').textContent));
  await explorer.waitForSelector('section.widget[data-worker="ready"]', { timeout: 90_000 });
  assert.equal(started.length, 1, 'one Pyodide, for the widget in use');
  await page.close();
  await new Promise((resolve) => lesson.close(resolve));
});

// What a teacher pastes, as the site hands it out: the oEmbed html and the widget page's copied
// embed code, each an <iframe> with the resize script, on a 600 px column of another origin.
function unescapeHtml(text) {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');
}

test('oEmbed html and the copied embed code grow to the whole widget at 600 px; maxheight makes a scrolling frame', async () => {
  const target = `${BASE_URL}/mmlu/widgets/calibration-bars`;
  const oembed = async (extra) => (await (await fetch(`${BASE_URL}/oembed?url=${encodeURIComponent(target)}&format=json&maxwidth=600${extra}`)).json());
  const whole = await oembed('');
  assert.equal(whole.width, 600);
  assert.match(whole.html, /<script src="[^"]+\/static\/js\/embed-resize\.js" async><\/script>/);
  const capped = await oembed('&maxheight=400');
  assert.equal(capped.height, 400);
  assert.match(capped.html, /height="400" data-max-height="400"/);
  const page = await (await fetch(target)).text();
  const copied = unescapeHtml(page.match(/<textarea[^>]*data-share="iframe">([\s\S]*?)<\/textarea>/)[1]);
  assert.match(copied, /embed-resize\.js/);
  const snippets = { oembed: whole.html, copied, capped: capped.html };
  const host = http.createServer((request, response) => {
    const name = request.url.slice(1);
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title></head>
      <body style="margin:0"><main style="width:600px"><h1>Calibration</h1>${snippets[name]}</main></body></html>`);
  });
  await new Promise((resolve) => host.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${host.address().port}`;
  const browserPage = await browser.newPage({ viewport: { width: 800, height: 900 } });
  for (const name of ['oembed', 'copied', 'capped']) {
    await browserPage.goto(`${origin}/${name}`);
    await browserPage.waitForFunction(() => document.querySelector('iframe').dataset.reportedHeight, null, { timeout: 60_000 });
    const frame = frameOf(browserPage, `${BASE_URL}/embed/mmlu/calibration-bars`);
    await frame.waitForSelector('section.widget[data-ready="true"]', { timeout: 60_000 });
    await redrawnForWidth(frame, 'calibration-bars');
    const content = () => frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
    if (name === 'capped') {
      assert.equal(Number(await browserPage.getAttribute('iframe', 'height')), 400, 'maxheight holds');
      assert.ok(await content() > 400, 'the widget is taller than 400 px at 600 px wide');
      assert.ok(await frame.evaluate(() => document.scrollingElement.scrollHeight > window.innerHeight), 'and its frame scrolls');
    } else {
      const height = await content();
      assert.ok(height > 720, `the calibration widget is ${height} px tall at 600 px wide, more than the first 720`);
      await browserPage.waitForFunction((h) => Math.abs(Number(document.querySelector('iframe').height) - h) <= 2, height);
      const [frameBox, widgetBottom] = [await browserPage.$eval('iframe', (f) => f.getBoundingClientRect().toJSON()),
        await frame.evaluate(() => document.querySelector('section.widget').getBoundingClientRect().bottom)];
      assert.equal(Math.round(frameBox.width), 600);
      assert.ok(widgetBottom <= frameBox.height, `the widget ends at ${widgetBottom} px, inside the ${frameBox.height} px frame: nothing cut`);
      assert.ok(await frame.evaluate(() => document.scrollingElement.scrollHeight <= window.innerHeight + 1), 'no scroll bar');
      await browserPage.setViewportSize({ width: 800, height: Math.min(4000, Math.ceil(frameBox.height) + 120) });
      await screenshot(browserPage, `embed-600-${name}`);
      await browserPage.setViewportSize({ width: 800, height: 900 });
    }
  }
  await browserPage.close();
  await new Promise((resolve) => host.close(resolve));
});
