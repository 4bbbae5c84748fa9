// Progressive enhancement for every page: popovers for terms and symbols, the theme toggle,
// and copy buttons. The pages are complete without it.
import { initPopovers } from './popovers.js';

const announcer = () => document.getElementById('announcer');

function announce(message) {
  const region = announcer();
  if (!region) return;
  region.textContent = '';
  // A fresh text node after a tick makes screen readers repeat an identical message.
  setTimeout(() => { region.textContent = message; }, 50);
}

function effectiveTheme() {
  const chosen = document.documentElement.dataset.theme;
  if (chosen === 'dark' || chosen === 'light') return chosen;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function initThemeToggle() {
  const button = document.getElementById('theme-toggle');
  if (!button) return;
  const sync = () => button.setAttribute('aria-pressed', String(effectiveTheme() === 'dark'));
  sync();
  button.hidden = false;
  button.addEventListener('click', () => {
    const next = effectiveTheme() === 'dark' ? 'light' : 'dark';
    document.documentElement.dataset.theme = next;
    try { localStorage.setItem('theme', next); } catch (error) { /* the choice lasts this page only */ }
    sync();
    announce(next === 'dark' ? 'Dark mode on' : 'Dark mode off');
  });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', sync);
}

async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return true;
  }
  return false;
}

function showDone(button, done, fallback) {
  const label = button.firstChild;
  const original = label.textContent;
  label.textContent = done ? 'Copied' : fallback;
  setTimeout(() => { label.textContent = original; }, 2000);
}

function initCopyButtons() {
  for (const button of document.querySelectorAll('.copy-link[data-section]')) {
    button.hidden = false;
    button.addEventListener('click', async () => {
      const url = new URL(`#${button.dataset.section}`, window.location.href).href;
      let done = false;
      try { done = await copyText(url); } catch (error) { done = false; }
      if (!done) history.replaceState(null, '', url); // the link is then in the address bar
      showDone(button, done, 'Link in address bar');
      announce(done ? 'Link copied' : 'The link is now in the address bar');
    });
  }
  for (const button of document.querySelectorAll('.copy-button[data-copy-target]')) {
    button.hidden = false;
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.dataset.copyTarget);
      let done = false;
      try { done = await copyText(source.textContent); } catch (error) { done = false; }
      if (!done) window.getSelection().selectAllChildren(source); // select it for Ctrl+C
      showDone(button, done, 'Selected: press Ctrl+C');
      announce(done ? 'Copied' : 'Text selected; copy it with your keyboard');
    });
  }
}

// A formula, table or code block wider than the screen scrolls sideways: such a scroller is made
// reachable by keyboard (arrow keys scroll it), named for screen readers, and marked so readers
// see that there is more. Checked again when the width changes.
const SCROLLER_NAMES = { equation: 'Formula', 'math-inline': 'Formula', TABLE: 'Table', PRE: 'Code' };

// A displayed formula a little wider than its column (a phone's) is set smaller to fit, down to
// 12 px; only a formula wider than that still scrolls.
function fitFormula(el) {
  const math = el.querySelector('math[display="block"]');
  if (!math) return;
  math.style.fontSize = '';
  if (el.scrollWidth <= el.clientWidth + 1) return;
  const size = parseFloat(getComputedStyle(math).fontSize);
  math.style.fontSize = `${Math.max(12, Math.floor(size * (el.clientWidth / el.scrollWidth) * 0.98 * 10) / 10)}px`;
}

function markScrollers() {
  const counts = {};
  for (const el of document.querySelectorAll('.equation, .math-inline, main table, main pre')) {
    if (el.classList.contains('equation')) fitFormula(el);
    const scrolls = el.scrollWidth > el.clientWidth + 1;
    el.classList.toggle('scrolls', scrolls);
    if (scrolls && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      el.dataset.madeScroller = 'true';
      el.setAttribute('role', 'region');
    } else if (!scrolls && el.dataset.madeScroller) {
      el.removeAttribute('tabindex');
      el.removeAttribute('role');
      el.removeAttribute('aria-label');
      delete el.dataset.madeScroller;
    }
    if (el.dataset.madeScroller) { // each region its own name, numbered in page order (axe: landmark-unique)
      const kind = SCROLLER_NAMES[el.tagName] || SCROLLER_NAMES[el.classList[0]] || 'Wide content';
      counts[kind] = (counts[kind] || 0) + 1;
      el.setAttribute('aria-label', `${kind} ${counts[kind]}, scrolls sideways`);
    }
  }
}

// Every snippet the browser can run gets "Edit and run"; the editor (CodeMirror) and Python load only
// when it is pressed. A snippet marked data-runs="server" needs what stays on the server (its label says what).
function initSnippets() {
  for (const snippet of document.querySelectorAll('.snippet:not([data-runs="server"])')) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'snippet-edit';
    button.textContent = 'Edit and run';
    button.addEventListener('click', async () => {
      button.disabled = true;
      button.textContent = 'Loading the editor…';
      try {
        await (await import('./snippet-editor.js')).openEditor(snippet, { announce });
        button.remove();
      } catch (error) {
        button.disabled = false;
        button.textContent = 'Edit and run (the editor did not load; try again)';
      }
    });
    snippet.querySelector('.snippet-label').append(' ', button);
  }
}

// "Show sources of numbers" is a link to the page in the other state (it works without JavaScript);
// here it switches in place (number-sources.js, loaded at the first use) and answers Space, as a switch does.
function initNumberSources() {
  const link = document.getElementById('sources-switch');
  if (!link) return;
  let busy = false;
  link.addEventListener('click', async (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey) return; // a new tab or window gets the page itself
    event.preventDefault();
    if (busy) return;
    busy = true;
    try {
      await (await import('./number-sources.js')).toggle(link, { announce, refresh: markScrollers });
    } catch (error) {
      window.location.href = link.href; // the server renders the other state
    } finally {
      busy = false;
    }
  });
  link.addEventListener('keydown', (event) => {
    if (event.key === ' ') { event.preventDefault(); link.click(); }
  });
}

// Long reference lists (a document's glossary) fold on a phone, where they are screens long; they open
// again for a link into them and for printing. Without JavaScript they stay open.
function foldOnPhones() {
  const folds = [...document.querySelectorAll('details[data-fold-narrow]')];
  if (!folds.length) return;
  const openFor = () => {
    const target = window.location.hash && document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    const fold = target && target.closest('details[data-fold-narrow]');
    if (fold) { fold.open = true; target.scrollIntoView(); }
  };
  if (window.matchMedia('(max-width: 30rem)').matches) folds.forEach((fold) => { fold.open = false; });
  openFor();
  window.addEventListener('hashchange', openFor);
  window.addEventListener('beforeprint', () => folds.forEach((fold) => { fold.open = true; }));
}

initPopovers();
foldOnPhones();
initSnippets();
initNumberSources();
initThemeToggle();
initCopyButtons();
markScrollers();
let resizeTimer;
window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(markScrollers, 150); });
// Reading offline: after the page has loaded, so the worker's first saving never delays it.
window.addEventListener('load', () => {
  const note = document.getElementById('offline-note');
  if (note) import('./offline.js').then((offline) => offline.saveForOffline(note)).catch(() => {});
}, { once: true });
