// The Content-Security-Policy in a real browser: pages, the Pyodide worker and the widgets run
// without a single CSP violation, and only /embed/ pages may be framed by another site.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { launch, BASE_URL, watchConsole, screenshot } from './lib.mjs';

let browser;
let reader; // one reader's context for every page: the first worker starts cold, the later ones from its snapshot
let otherOrigin;
let otherServer;

before(async () => {
  browser = await launch();
  reader = await browser.newContext();
  // A teacher's site on another origin (another port) that tries to frame two of our pages.
  otherServer = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>Lesson</title>
      <iframe id="page" title="annotated page" src="${BASE_URL}/mmlu/" width="600" height="300"></iframe>
      <iframe id="widget" title="chance explorer" src="${BASE_URL}/embed/mmlu/chance-explorer?n=100&score=0.3" width="600" height="300"></iframe>`);
  });
  await new Promise((resolve) => otherServer.listen(0, '127.0.0.1', resolve));
  otherOrigin = `http://127.0.0.1:${otherServer.address().port}`;
});

after(async () => {
  await browser?.close();
  otherServer?.close();
});

function cspViolations(problems) {
  return problems.filter((text) => /Content Security Policy|Refused to/i.test(text));
}

for (const path of ['/', '/mmlu/', '/mmlu/glossary/', '/embed/mmlu/chance-explorer?n=100&score=0.3']) {
  test(`no CSP violations on ${path}, with the math worker started`, async () => {
    const page = await reader.newPage();
    const problems = watchConsole(page);
    const violations = [];
    await page.exposeFunction('reportViolation', (v) => violations.push(v));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(`${e.violatedDirective} ${e.blockedURI}`));
    });
    await page.goto(BASE_URL + path);
    // A widget's worker starts at the reader's first touch: touch one where the page has one.
    const control = page.locator('section.widget[data-driver="worker"] form input:not([type="hidden"])').first();
    if (await control.count()) {
      await page.waitForSelector('section.widget[data-ready="true"]');
      await control.focus();
      await page.waitForSelector('section.widget[data-worker="ready"]', { timeout: 90_000 });
    }
    // Wait for the Pyodide worker where the page started one (it answers the page's first computation).
    await page.waitForLoadState('networkidle', { timeout: 60000 });
    assert.deepEqual(violations, []);
    assert.deepEqual(cspViolations(problems), []);
    await page.close();
  });
}

test('another site can frame an embed page but not the annotated page', async () => {
  const page = await browser.newPage();
  await page.goto(otherOrigin + '/');
  await page.waitForLoadState('networkidle', { timeout: 60000 });
  const widgetFrame = page.frames().find((f) => f.url().includes('/embed/mmlu/chance-explorer'));
  assert.ok(widgetFrame, 'the embed iframe loaded');
  assert.ok((await widgetFrame.locator('body').innerText()).length > 20, 'the embed shows its widget');
  const pageFrame = page.frames().find((f) => f !== page.mainFrame() && f !== widgetFrame);
  // Chromium replaces a refused frame's document with an error page; none of our content is in it.
  const refusedText = pageFrame ? await pageFrame.locator('body').innerText().catch(() => '') : '';
  assert.ok(!refusedText.includes('Massive Multitask'), 'the annotated page must not render inside a frame');
  await screenshot(page, 'framing-from-another-origin');
  await page.close();
});
