// The math core page: recompute every worked example in the browser and compare with the server.
// Each table row carries its function, its arguments and the server's result (data-* attributes).
import { explainers } from './python-runtime.js';

const status = document.getElementById('math-core-status');
const rows = [...document.querySelectorAll('[data-explainer-row]')];

// Like Python's math.isclose, applied through lists and objects.
function same(a, b) {
  if (typeof a === 'number' && typeof b === 'number') {
    return Math.abs(a - b) <= Math.max(1e-9 * Math.max(Math.abs(a), Math.abs(b)), 1e-12);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => same(a[k], b[k]));
  }
  return a === b;
}

function fill(cell, text, matches) {
  const code = document.createElement('code');
  code.textContent = text;
  const verdict = document.createElement('span');
  verdict.className = matches ? 'math-core-match' : 'math-core-mismatch';
  verdict.textContent = matches ? 'same as server' : 'differs from server';
  cell.replaceChildren(code, ' ', verdict);
}

async function run() {
  status.textContent = 'Loading Python in your browser…';
  await explainers.ready;
  // Results come back with their text written by Python (widgetkit.words.shown), as the server's column.
  const results = await explainers.batch(rows.map((row) => ({ fn: row.dataset.fn, args: JSON.parse(row.dataset.args), shown: true })));
  let matching = 0;
  results.forEach(({ value, shown }, i) => {
    const matches = same(value, JSON.parse(rows[i].dataset.server));
    matching += matches;
    fill(rows[i].querySelector('[data-browser]'), shown, matches);
  });
  const seconds = ((performance.now() - explainers.timings.created_ms) / 1000).toFixed(1);
  status.textContent = `Your browser computed all ${rows.length} examples (Python started in ${seconds} s): `
    + `${matching} of ${rows.length} match the server.`;
  document.documentElement.dataset.mathCore = matching === rows.length ? 'match' : 'mismatch';
}

run().catch((error) => {
  status.textContent = `Your browser could not run the math core (${error.message}); the server's values above are complete.`;
  document.documentElement.dataset.mathCore = 'failed';
});
