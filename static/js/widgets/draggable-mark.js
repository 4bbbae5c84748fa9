// Handles: marks in a widget's figure that a reader drags (mouse, pen, touch) or keys, each bound
// to one of the widget's form controls (widgetkit.scene.handle draws them, role="slider").
//
// A handle knows nothing of its widget: its data attributes name the control it drives
// (data-drives, and data-items for some values of a list setting), how its pixels map to values
// (data-stops, "pixel:value" pairs along data-axis, linear between two) and its step (data-step;
// data-scale="log" steps keys by data-log-step powers of ten). Moving it writes the control's
// value and fires the control's input event (change when the move ends), so the widget's usual
// path recomputes the view; the form stays as it is, and without JavaScript it is the way to
// change the setting. While the new view is computed the handle follows the pointer at once.

import { boxText, settingValue } from './percent-box.js';

const KEY_STEPS = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10 };

function stopsOf(mark) {
  return mark.dataset.stops.split(' ').map((pair) => pair.split(':').map(Number));
}

// The value at `pixel` (linear between the two stops around it; the end stops' slope beyond them).
function valueAt(stops, pixel) {
  const ascending = stops[stops.length - 1][0] >= stops[0][0];
  let i = 0;
  while (i < stops.length - 2 && (ascending ? pixel > stops[i + 1][0] : pixel < stops[i + 1][0])) i += 1;
  const [p0, v0] = stops[i];
  const [p1, v1] = stops[i + 1];
  return p1 === p0 ? v0 : v0 + ((pixel - p0) * (v1 - v0)) / (p1 - p0);
}

// The pixel of `value`: the same stops read the other way (values run one way along them).
function pixelAt(stops, value) {
  return valueAt(stops.map(([p, v]) => [v, p]), value);
}

function decimals(step) {
  const text = String(step);
  return text.includes('.') ? text.length - text.indexOf('.') - 1 : 0;
}

// A value on the handle's grid (its step) and within its range, as the control's text.
function snapped(mark, value) {
  const step = Number(mark.dataset.step) || 0;
  const low = Number(mark.getAttribute('aria-valuemin'));
  const high = Number(mark.getAttribute('aria-valuemax'));
  const onGrid = step ? Math.round(value / step) * step : value;
  return Math.min(high, Math.max(low, onGrid)).toFixed(decimals(mark.dataset.step || '1'));
}

// The form controls a handle drives: its setting's box (a percent setting's names it in
// data-percent-of and holds percent), or the chosen entries of a list setting.
function controlsOf(widget, mark) {
  const { drives } = mark.dataset;
  const all = [...widget.form.querySelectorAll(`[data-percent-of="${drives}"], [name="${drives}"]`)]
    .filter((el) => el.type !== 'hidden' && el.type !== 'checkbox');
  if (mark.dataset.items === undefined) return all.slice(0, 1);
  return mark.dataset.items.split(' ').filter(Boolean).map((i) => all[Number(i)]).filter(Boolean);
}

function mean(values) {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

// Where the controls stand now (ahead of the figure while a new view is being computed).
function currentValue(widget, mark) {
  const controls = controlsOf(widget, mark);
  return controls.length ? mean(controls.map(settingValue)) : Number(mark.getAttribute('aria-valuenow'));
}

// Write `value` into the controls (a list setting's entries all shift by the same amount) and
// fire their events; returns whether anything changed.
function setValue(widget, mark, value, committed, from = null) {
  const controls = controlsOf(widget, mark);
  if (!controls.length) return false;
  const before = from || controls.map(settingValue);
  const shift = Number(snapped(mark, value)) - mean(before);
  let changed = false;
  controls.forEach((el, i) => {
    const text = boxText(el, snapped(mark, before[i] + shift));
    if (el.value !== text) { el.value = text; changed = true; }
  });
  if (changed || committed) {
    for (const el of controls) el.dispatchEvent(new Event(committed ? 'change' : 'input', { bubbles: true }));
  }
  if (changed) follow(mark, currentValue(widget, mark));
  return changed;
}

// Move the drawn mark to `value` at once, until the redrawn figure puts it there itself.
function follow(mark, value) {
  const stops = stopsOf(mark);
  const offset = pixelAt(stops, value) - pixelAt(stops, Number(mark.getAttribute('aria-valuenow')));
  mark.setAttribute('transform', mark.dataset.axis === 'y' ? `translate(0 ${offset})` : `translate(${offset} 0)`);
}

// The next value a key gives: a step (ten for Page Up/Down) along the handle's scale, or an end.
function keyed(mark, value, key) {
  if (key === 'Home') return Number(mark.getAttribute('aria-valuemin'));
  if (key === 'End') return Number(mark.getAttribute('aria-valuemax'));
  const steps = KEY_STEPS[key];
  if (mark.dataset.scale === 'log') {
    const next = value * 10 ** (steps * Number(mark.dataset.logStep));
    const step = Number(mark.dataset.step) || 0; // at least one step, so a small value still moves
    return steps > 0 ? Math.max(next, value + step) : Math.min(next, value - step);
  }
  return value + steps * Number(mark.dataset.step);
}

// The pointer's position along the handle's axis, in the figure's own units.
function along(svg, mark, event) {
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
  return mark.dataset.axis === 'y' ? point.y : point.x;
}

// The one-time hint: the first handle's words ("drag the dot to set the score", its data-hint)
// in a bubble beside its knob, from the widget's first view until the reader first drags or keys
// one of its handles; remembered per widget (localStorage), so a reader who has used it is not
// told again. It says nothing a screen reader needs (the handle is a slider): aria-hidden.
const HINT_USED = 'handle-hint-used:';

function hintUsed(el) {
  try { return localStorage.getItem(HINT_USED + el.dataset.widget) === 'yes'; } catch (error) { return false; }
}

function placeHint(el) {
  const old = el.querySelector('.handle-hint');
  if (el.dataset.handleUsed || hintUsed(el)) { old?.remove(); return; }
  // The stand-in picture not shown for this width has no box: the hint goes by the one shown.
  const knob = [...el.querySelectorAll('svg[data-role="figure"] [data-hint] .fig-knob')]
    .find((node) => node.getBoundingClientRect().width > 0);
  const body = el.querySelector('.widget-body');
  if (!knob || !body) { old?.remove(); return; }
  const hint = old || Object.assign(document.createElement('p'), { className: 'handle-hint' });
  hint.setAttribute('aria-hidden', 'true');
  hint.textContent = knob.closest('[data-hint]').dataset.hint;
  if (!old) body.append(hint);
  const at = knob.getBoundingClientRect();
  const frame = body.getBoundingClientRect();
  const { width, height } = hint.getBoundingClientRect();
  const middle = at.left + at.width / 2 - frame.left;
  const left = Math.max(0, Math.min(frame.width - width, middle - width / 2));
  const above = at.top - frame.top - height - 8;
  const below = above < 0; // no room above the knob in the figure: under it
  hint.classList.toggle('below', below);
  hint.style.left = `${left}px`;
  hint.style.top = `${below ? at.bottom - frame.top + 8 : above}px`;
  hint.style.setProperty('--pointer-x', `${middle - left}px`);
}

function hintDone(el) {
  if (el.dataset.handleUsed) return;
  el.dataset.handleUsed = 'true';
  try { localStorage.setItem(HINT_USED + el.dataset.widget, 'yes'); } catch (error) { /* this page only */ }
  placeHint(el);
}

export function enableHandles(widget) {
  const { el } = widget;
  let drag = null;
  placeHint(el);
  el.addEventListener('widget:rendered', () => placeHint(el));
  new ResizeObserver(() => placeHint(el)).observe(el);
  el.addEventListener('pointerdown', (event) => {
    const mark = event.target.closest && event.target.closest('[data-drives][role="slider"]');
    if (!mark || !el.contains(mark) || event.button > 0) return;
    hintDone(el);
    event.preventDefault(); // no text selection, no scrolling (touch-action: none on the handle too)
    mark.focus({ preventScroll: true });
    mark.setPointerCapture(event.pointerId);
    const svg = mark.ownerSVGElement;
    const stops = stopsOf(mark); // the picture as it was grabbed: its scale may change under the drag
    drag = {
      mark, svg, stops, pointer: event.pointerId, start: along(svg, mark, event),
      from: controlsOf(widget, mark).map(settingValue),
    };
    drag.origin = pixelAt(stops, mean(drag.from.length ? drag.from : [Number(mark.getAttribute('aria-valuenow'))]));
    mark.dataset.dragging = 'true';
  });
  // A finger on a handle moves the handle, never the page: touch-action (widgets.css) is not
  // honoured on SVG shapes by every browser, so the touch's default (scrolling) is cancelled too.
  el.addEventListener('touchstart', (event) => {
    if (event.target.closest && event.target.closest('[data-drives][role="slider"]')) event.preventDefault();
  }, { passive: false });
  el.addEventListener('pointermove', (event) => {
    if (!drag || event.pointerId !== drag.pointer) return;
    const pixel = drag.origin + along(drag.svg, drag.mark, event) - drag.start;
    setValue(widget, drag.mark, valueAt(drag.stops, pixel), false, drag.from);
  });
  const release = (event) => {
    if (!drag || event.pointerId !== drag.pointer) return;
    const { mark } = drag;
    drag = null;
    delete mark.dataset.dragging;
    for (const c of controlsOf(widget, mark)) c.dispatchEvent(new Event('change', { bubbles: true }));
  };
  el.addEventListener('pointerup', release);
  el.addEventListener('pointercancel', release);
  el.addEventListener('keydown', (event) => {
    const mark = event.target.closest && event.target.closest('[data-drives][role="slider"]');
    if (!mark || !(event.key in KEY_STEPS || event.key === 'Home' || event.key === 'End')) return;
    event.preventDefault(); // the arrows move the handle, not the page
    hintDone(el);
    setValue(widget, mark, keyed(mark, currentValue(widget, mark), event.key), true);
  });
}

// Put a redrawn figure's marks in place of the old ones, keeping each handle's element (matched
// by data-mark) in the document with the new one's attributes and drawing: the handle in use
// keeps its focus and its pointer capture (both are lost when an element leaves the document),
// and a screen reader hears its new value as on any slider. Handles are top-level marks.
export function replaceMarks(group, fragment) {
  const kept = new Map();
  const freshHandles = new Map([...fragment.children].filter((m) => m.dataset.mark).map((m) => [m.dataset.mark, m]));
  for (const old of [...group.children].filter((m) => m.dataset.mark)) {
    const fresh = freshHandles.get(old.dataset.mark);
    if (!fresh) continue;
    const dragging = old.dataset.dragging;
    for (const { name } of [...old.attributes]) if (!fresh.hasAttribute(name)) old.removeAttribute(name);
    for (const { name, value } of [...fresh.attributes]) old.setAttribute(name, value);
    if (dragging) old.dataset.dragging = dragging;
    old.replaceChildren(...fresh.childNodes);
    kept.set(fresh, old);
  }
  for (const node of [...group.childNodes]) if (![...kept.values()].includes(node)) node.remove();
  let cursor = null; // the last node placed: the next goes after it
  for (const node of [...fragment.childNodes]) {
    const old = kept.get(node);
    if (old) {
      if (cursor ? cursor.nextSibling !== old : group.firstChild !== old) {
        if (cursor) cursor.after(old); else group.prepend(old); // handles drawn in a new order: moved
      }
      cursor = old;
    } else if (cursor) {
      cursor.after(node);
      cursor = node;
    } else {
      group.insertBefore(node, group.firstChild);
      cursor = node;
    }
  }
}
