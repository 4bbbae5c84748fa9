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

// Run axe-core in the page and return its violations (an empty list is a pass).
export async function axeViolations(page) {
  // Evaluated through the DevTools protocol: our CSP (rightly) blocks an injected inline script.
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => await window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  }));
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

export async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });
}

// A widget's text summary as a reader who opens "More about this figure" reads it: the headline and
// the sentences behind it, one a line (innerText would leave out the folded ones). For locator.evaluate.
export function summaryText(summary) {
  return [...summary.querySelectorAll('p')].map((p) => p.textContent).join('\n');
}
