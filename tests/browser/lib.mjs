// Helpers shared by the browser tests: launch Debian's Chromium, check accessibility with
// axe-core, and save screenshots under tests/artifacts/ (look at them).
import { chromium } from 'playwright-core';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
export const BASE_URL = process.env.BASE_URL || 'http://127.0.0.1:8000';
export const ARTIFACTS = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'artifacts');
mkdirSync(ARTIFACTS, { recursive: true });

export async function launch(options = {}) {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ...options,
  });
}

// Collect console errors and CSP violations so a test can assert there were none.
export function watchConsole(page) {
  const problems = [];
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(msg.text()); });
  page.on('pageerror', (err) => problems.push(String(err)));
  return problems;
}

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
// The rules a page's colours decide: the second look at a page whose palette alone changed (dark).
export const COLOUR_RULES = ['color-contrast', 'link-in-text-block'];

// Run axe-core in the page (or frame) and return its violations (an empty list is a pass).
// `within`: the component a test is about, as a Locator, or CSS selectors (every element they
// match): axe checks only that part of the page. A whole document page costs several CPU-seconds
// to check, and page.test.mjs and each document's own test check every page whole once.
// `rules`: only these rules, for a second look at the same page where only colours changed (dark).
export async function axeViolations(page, { within, rules } = {}) {
  // Evaluated through the DevTools protocol: our CSP (rightly) blocks an injected inline script.
  await page.evaluate(axeSource);
  // Only violations are read: axe then skips writing up every passing and inapplicable check's
  // elements, which on a whole document page is a fifth of its time (every rule still runs).
  const options = { runOnly: rules ? { type: 'rule', values: rules } : { type: 'tag', values: AXE_TAGS },
    resultTypes: ['violations'] };
  const violations = typeof within?.evaluate === 'function'
    ? await within.evaluate((element, opts) => window.axe.run(element, opts).then((r) => r.violations), options)
    : await page.evaluate(([selectors, opts]) => window.axe.run(
      selectors ? { include: selectors.map((s) => [s]) } : document, opts).then((r) => r.violations), [within ?? null, options]);
  return violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

export async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });
}

// A widget's text summary as a reader who opens "More about this figure" reads it: the headline and
// the sentences behind it, one a line (innerText would leave out the folded ones). For locator.evaluate.
export function summaryText(summary) {
  return [...summary.querySelectorAll('p')].map((p) => p.textContent).join('\n');
}

// The page's Python runtime timings (static/js/python-runtime.js): `worker.snapshot` is 'restored'
// when its Python started from the memory snapshot; `snapshot.stored_ms` once it left one.
export const runtimeTimings = (page) => page.evaluate(async () => structuredClone(
  (await import('/static/js/python-runtime.js')).explainers.timings));
// Until the page's Python has stored its memory snapshot (Cache Storage) for the next page. Polled
// inside the page: waitForFunction takes an async predicate's Promise as truthy and returns at once.
export const snapshotStored = (page) => page.evaluate(async () => {
  const { timings } = (await import('/static/js/python-runtime.js')).explainers;
  for (const started = performance.now(); !timings.snapshot?.stored_ms; await new Promise((r) => setTimeout(r, 50))) {
    if (timings.snapshot?.error) throw new Error(`the snapshot was not stored: ${timings.snapshot.error}`);
    if (performance.now() - started > 60_000) throw new Error('no snapshot stored within 60 s');
  }
});
