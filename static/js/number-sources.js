// "Show sources of numbers", switched without a reload. The server marks the numbers (engine/numbers.py,
// the one matcher the ledger test uses): this fetches the page in the state the switch asks for and
// swaps in the blocks whose marks differ, the appendix and the marks' popovers, then updates the URL.
// Widgets, snippets and everything else the page's scripts own are never in such a block, so they
// keep their state.
const BLOCKS = '.paper > .title-block, .paper .section-body';
const hasMarks = (el) => el.querySelector('.number-mark') !== null;

// A fold a phone shows closed (details.phone-fold) holds blocks too, snippets among them: its blocks
// are swapped one by one, so the fold stays as the reader left it and the snippets keep their state.
function swapChildren(container, next) {
  const children = [...container.children];
  const nextChildren = [...next.children];
  if (children.length !== nextChildren.length) return;
  children.forEach((child, j) => {
    if (child.matches('details.phone-fold')) swapChildren(child, nextChildren[j]);
    else if (hasMarks(child) || hasMarks(nextChildren[j])) child.replaceWith(document.importNode(nextChildren[j], true));
  });
}

function swapBlocks(fresh) {
  const live = document.querySelectorAll(BLOCKS);
  const next = fresh.querySelectorAll(BLOCKS);
  if (live.length !== next.length) return false;
  live.forEach((container, i) => swapChildren(container, next[i]));
  return true;
}

function swapAppendix(fresh) {
  for (const el of document.querySelectorAll('#number-sources, .number-tips')) el.remove();
  const added = [...fresh.querySelectorAll('#number-sources, .number-tips')]; // the appendix, then its popovers
  document.querySelector('.paper').after(...added.map((el) => document.importNode(el, true)));
}

export async function toggle(link, { announce, refresh }) {
  const target = new URL(link.href);
  const response = await fetch(target, { headers: { Accept: 'text/html' } });
  if (!response.ok) throw new Error(`${response.status}`);
  const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
  if (!swapBlocks(fresh)) throw new Error('the page changed');
  swapAppendix(fresh);
  const on = target.searchParams.get('sources') === 'on';
  link.setAttribute('aria-checked', String(on));
  link.href = fresh.getElementById('sources-switch').href;
  history.replaceState(history.state, '', target.pathname + target.search + location.hash);
  refresh();
  announce(on ? 'Sources of numbers shown: each marked number opens its entry' : 'Sources of numbers hidden');
}
