// Glossary terms and equation symbols that explain themselves.
//
// Every trigger (a term link or a symbol <mrow>) carries data-tip, the id of a role="tooltip"
// element rendered hidden at the end of the page, and aria-describedby pointing at its text,
// so screen readers announce the definition whether or not this script runs. This script
// only shows and places the popover:
//   - mouse: on hover, after a short delay; it stays open while the pointer moves into it;
//   - keyboard: on focus; it closes when focus leaves;
//   - touch: the first tap opens it (a term's link is followed from the popover), a second tap
//     or a tap anywhere else closes it;
//   - Escape closes it wherever the pointer or focus is.
const SHOW_DELAY_MS = 60;
const HIDE_GRACE_MS = 500; // time to move the pointer from the word into its popover
const MARGIN_PX = 8;

let current = null; // { trigger, tip, pinned }
let showTimer = 0;
let hideTimer = 0;
let press = null; // { trigger, wasOpen, pointerType } for the tap in progress

const triggerOf = (node) => (node instanceof Element ? node.closest('[data-tip]') : null);
const tipOf = (node) => (node instanceof Element ? node.closest('.tip') : null);

function place(trigger, tip) {
  const box = trigger.getBoundingClientRect();
  const viewportWidth = document.documentElement.clientWidth;
  const width = tip.offsetWidth;
  const height = tip.offsetHeight;
  let left = box.left + box.width / 2 - width / 2;
  left = Math.max(MARGIN_PX, Math.min(left, viewportWidth - width - MARGIN_PX));
  const roomBelow = window.innerHeight - box.bottom;
  const above = roomBelow < height + 2 * MARGIN_PX && box.top > height + 2 * MARGIN_PX;
  const top = above ? box.top - height - MARGIN_PX : box.bottom + MARGIN_PX;
  tip.dataset.side = above ? 'above' : 'below';
  tip.style.left = `${Math.round(left + window.scrollX)}px`;
  tip.style.top = `${Math.round(top + window.scrollY)}px`;
}

function show(trigger, { pinned = false } = {}) {
  clearTimeout(showTimer);
  clearTimeout(hideTimer);
  const tip = document.getElementById(trigger.dataset.tip);
  if (!tip) return;
  if (current && current.trigger !== trigger) hide();
  tip.hidden = false;
  tip.classList.add('is-open');
  trigger.classList.add('is-active');
  place(trigger, tip);
  current = { trigger, tip, pinned: pinned || (current?.trigger === trigger && current.pinned) };
}

function hide() {
  clearTimeout(showTimer);
  clearTimeout(hideTimer);
  if (!current) return;
  current.tip.hidden = true;
  current.tip.classList.remove('is-open');
  current.trigger.classList.remove('is-active');
  current = null;
}

function hideSoon() {
  clearTimeout(showTimer);
  if (!current || current.pinned) return;
  clearTimeout(hideTimer);
  hideTimer = setTimeout(hide, HIDE_GRACE_MS);
}

function onPointerOver(event) {
  if (event.pointerType !== 'mouse') return;
  const trigger = triggerOf(event.target);
  if (trigger) {
    if (current?.trigger === trigger) { clearTimeout(hideTimer); return; }
    clearTimeout(showTimer);
    showTimer = setTimeout(() => show(trigger), SHOW_DELAY_MS);
  } else if (current && tipOf(event.target) === current.tip) {
    clearTimeout(hideTimer);
  }
}

function onPointerOut(event) {
  if (event.pointerType !== 'mouse') return;
  const from = triggerOf(event.target) || tipOf(event.target);
  if (!from) return;
  const to = event.relatedTarget;
  if (to instanceof Node && (from.contains(to) || current?.tip.contains(to) || current?.trigger.contains(to))) return;
  clearTimeout(showTimer);
  hideSoon();
}

function onPointerDown(event) {
  const trigger = triggerOf(event.target);
  press = trigger ? { trigger, wasOpen: current?.trigger === trigger, pointerType: event.pointerType } : null;
  if (current && !trigger && !current.tip.contains(event.target)) hide(); // a tap or click elsewhere
}

function onClick(event) {
  const trigger = triggerOf(event.target);
  if (!trigger) return;
  const touch = press?.trigger === trigger && press.pointerType !== 'mouse';
  const isLink = trigger.hasAttribute('href');
  if (isLink && !touch) return; // a mouse click or Enter on a term follows it to the glossary
  event.preventDefault();
  const wasOpen = press?.trigger === trigger ? press.wasOpen && current?.trigger === trigger : current?.trigger === trigger;
  if (wasOpen && (touch || current.pinned)) hide();
  else show(trigger, { pinned: true });
  press = null;
}

function onFocusIn(event) {
  const trigger = triggerOf(event.target);
  if (trigger) show(trigger);
}

function onFocusOut(event) {
  const trigger = triggerOf(event.target);
  if (!trigger || current?.trigger !== trigger || current.pinned) return;
  const to = event.relatedTarget;
  if (to instanceof Node && current.tip.contains(to)) return;
  hide();
}

function onKeyDown(event) {
  if (event.key === 'Escape' && current) {
    hide();
    event.stopPropagation();
  } else if ((event.key === 'Enter' || event.key === ' ') && triggerOf(event.target) && !event.target.hasAttribute('href')) {
    // A focused symbol: Enter or Space pins its popover open, or closes it.
    event.preventDefault();
    const trigger = triggerOf(event.target);
    if (current?.trigger === trigger && current.pinned) hide();
    else show(trigger, { pinned: true });
  }
}

export function initPopovers() {
  document.addEventListener('pointerover', onPointerOver);
  document.addEventListener('pointerout', onPointerOut);
  document.addEventListener('pointerdown', onPointerDown);
  document.addEventListener('click', onClick);
  document.addEventListener('focusin', onFocusIn);
  document.addEventListener('focusout', onFocusOut);
  document.addEventListener('keydown', onKeyDown);
  window.addEventListener('resize', () => { if (current) place(current.trigger, current.tip); });
  document.documentElement.classList.add('has-popovers');
}
