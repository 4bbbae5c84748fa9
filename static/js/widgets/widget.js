// Makes every server-rendered widget on the page interactive, for any document.
//
// The server already drew each widget for its state. Here the form controls are wired up: on
// every input the widget's state goes to its view (the widget module's Python, run by the Pyodide
// worker; a widget drawn by the server, whose view needs the server's data, asks the widget JSON
// route), and the returned view (SVG marks, sentences, messages, canonical query, markup fragments
// the widget's Python escaped) is copied into the page. No number is computed here; this file only moves values
// between the form, the view and the DOM. A widget's own behaviour lives in its optional script
// beside its module (data-script), with optional setup(widget), onInput(widget, target) and
// apply(widget, view).
//
// Until the worker is ready, each change is computed by the server (the same Python, through the
// widget JSON route), so a reader's first input is answered at once; when the worker is ready the
// widget switches to it without a visible change. On a document page (and in an embed) the worker
// starts only when the reader first touches a widget (a pointer on it, focus in its controls, an
// input): a reader who only reads downloads no Pyodide and stores no snapshot. A widget's own page
// (mode "page") is there to be used, so it starts its worker at once.
//
// A figure is drawn for the width it is shown at (widgetkit/layout.py): the view is asked for the
// figure's frame's width, measured here, and again whenever the frame's width changes. Until the
// first answer, the server's picture for a phone or for a wider frame stands in (widgets.css picks).
//
// Long because: this is the one driver every widget shares, and its steps (wire the controls,
// measure the frame, ask the worker or the server, copy the view into the page) all work on one
// widget record; what belongs to a single widget already lives in that widget's own script.

import { enableHandles, replaceMarks } from './draggable-mark.js';
import { boxText } from './percent-box.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
// A static export (engine/export.py): no server answers, so the worker computes every change, and
// a widget's settings in the address (which a static host ignores) are read here. A widget drawn by
// the server computes there in the worker too when its script can fetch the data a view is made of
// (its shipped(widget, state), from files the export wrote): the view gets them as context.shipped.
const STATIC_EXPORT = document.documentElement.hasAttribute('data-static-export');
// The printed column (A4 less its margins is about 673 CSS px): a figure drawn wider than this is
// drawn again for it, kept aside for print only, so printed chart text keeps its size (≥ 8 pt).
const PRINT_WIDTH = 640;
const PRINT_DELAY_MS = 600;

// The math core's client, imported only when a widget on the page needs it: importing it starts
// Pyodide, which the prompt anatomy (data from the server) does not need on the live site.
let mathCoreClient;
function mathCore() {
  mathCoreClient = mathCoreClient || import('../python-runtime.js').then((module) => module.explainers);
  return mathCoreClient;
}

// Build SVG elements from the view model's marks (text goes in as text, never as markup).
function buildMarks(marks) {
  const fragment = document.createDocumentFragment();
  for (const m of marks) {
    const node = document.createElementNS(SVG_NS, m.tag);
    for (const [key, value] of Object.entries(m.attrs)) node.setAttribute(key, value);
    if (m.text !== null && m.text !== undefined) node.textContent = m.text;
    if (m.children.length) node.append(buildMarks(m.children));
    fragment.append(node);
  }
  return fragment;
}

function drawFigure(svg, fig) {
  svg.setAttribute('width', fig.width);
  svg.setAttribute('height', fig.height);
  svg.setAttribute('viewBox', `0 0 ${fig.width} ${fig.height}`);
  svg.setAttribute('role', fig.role);
  svg.querySelector('title').textContent = fig.label;
  // A handle in use keeps its element and so its focus. A data point a reader reached with Tab is
  // drawn anew: the focus goes to the same point (the same place among the figure's points), not
  // back to the start of the page.
  const group = svg.querySelector('g.marks');
  const points = () => [...group.querySelectorAll('[tabindex]:not([data-mark])')];
  const focused = points().indexOf(document.activeElement);
  replaceMarks(group, buildMarks(fig.marks));
  if (focused >= 0) points()[focused]?.focus({ preventScroll: true });
}

// The summary's sentences as shown: the headline, those behind its "More about this figure", then
// those in its fold for engineers.
function summarySentences(summary) {
  return [...summary.querySelectorAll('p')].map((node) => node.textContent);
}

const paragraph = (text) => {
  const node = document.createElement('p');
  node.textContent = text;
  return node;
};

// The headline (the first sentence) and the rest behind a disclosure, ending with the fold for
// engineers, as the server draws them (summary_sentences in _macros.html); the disclosures keep
// whether the reader opened them. The same sentences are left as they are, so a redraw for a new
// width is not read out again.
function showSummary(summary, sentences, forEngineers = []) {
  const shown = summarySentences(summary);
  const wanted = [...sentences, ...forEngineers];
  if (shown.length === wanted.length && shown.every((text, i) => text === wanted[i])) return;
  summary.querySelector(':scope > p').textContent = sentences[0] || '';
  const more = summary.querySelector('[data-role="summary-more"]');
  const fold = more.querySelector('[data-role="summary-engineers"]');
  more.hidden = sentences.length < 2 && !forEngineers.length;
  fold.hidden = !forEngineers.length;
  fold.replaceChildren(fold.querySelector(':scope > summary'), ...forEngineers.map(paragraph));
  more.replaceChildren(more.querySelector(':scope > summary'), ...sentences.slice(1).map(paragraph), fold);
}

function paragraphs(container, sentences, tag = 'p') {
  container.replaceChildren(...sentences.map((text) => {
    const node = document.createElement(tag);
    node.textContent = text;
    return node;
  }));
}

// The share box's iframe: the server's one snippet template, with this view's address filled in.
function escapeAttribute(text) {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// The form's values as the view model expects them: one string per name, repeated names joined.
function readForm(form) {
  const state = {};
  const data = new FormData(form);
  for (const name of new Set(data.keys())) {
    state[name] = data.getAll(name).map(String).filter((v, i, all) => v !== '' || all.length === 1).join(',');
  }
  return state;
}

// A slider on a log scale (data-scale="log") moves along log10 of its number box's value.
function sliderPosition(slider, value) {
  return slider.dataset.scale === 'log' ? String(Math.log10(Number(value))) : String(value);
}
function sliderValue(slider, box) {
  if (slider.dataset.scale !== 'log') return slider.value;
  const value = 10 ** Number(slider.value);
  return String(box.step === 'any' ? Number(value.toPrecision(3)) : Math.round(value));
}

class Widget {
  constructor(el) {
    this.el = el;
    this.name = el.dataset.widget;
    this.view = `${el.dataset.paper}/${el.dataset.widget}`;
    this.form = el.querySelector('form.widget-controls');
    this.svg = el.querySelector('svg[data-role="figure"]');
    this.summary = el.querySelector('.widget-summary');
    this.messages = el.querySelector('.widget-messages');
    this.engine = el.querySelector('[data-role="engine"]');
    this.context = el.dataset.context ? JSON.parse(el.dataset.context) : null;
    this.serverContext = el.dataset.context || null; // what the server knows; a loaded file it does not
    this.workerReady = false;
    this.workerStarted = false;
    this.ownsUrl = el.dataset.mode !== 'inline';
    this.busy = false;
    this.pending = false;
    this.extra = null;
    // The width the figure is drawn for: known when the server drew one picture for a width asked
    // for; unknown while its stand-ins for a phone and a wider frame are shown.
    const figures = el.querySelectorAll('svg[data-role="figure"]');
    this.drawnWidth = figures.length === 1 ? this.svg.viewBox.baseVal.width : null;
    this.width = null;
  }

  // The width of the figure's frame, in whole CSS pixels (rounded down, so the picture is never
  // scaled down by a fraction of a pixel).
  measure() {
    const width = Math.floor(this.svg.parentElement.getBoundingClientRect().width);
    if (width === this.width) return; // only the height changed: the new picture itself
    this.width = width;
    this.el.dataset.shownWidth = String(width);
    // In a static export only the worker draws: until a touch starts it, the server's picture stays.
    if (STATIC_EXPORT && !this.workerStarted) return;
    if (width > 0 && width !== this.drawnWidth) this.request();
  }

  async start() {
    // Relative to the page (a static export writes it so), not to this module.
    if (this.el.dataset.script) this.extra = await import(new URL(this.el.dataset.script, document.baseURI).href);
    this.inWorker = this.el.dataset.driver === 'worker' || (STATIC_EXPORT && Boolean(this.extra?.shipped));
    if (STATIC_EXPORT && !this.inWorker) { // its view needs the server's data
      this.engine.textContent = 'This copy of the page is a set of files: its first picture stays as it is. '
        + 'Changing the settings works on the live site.';
      for (const control of this.form.elements) control.disabled = true;
      return;
    }
    for (const node of this.el.querySelectorAll('[hidden][data-pair], [hidden][data-role="js-only"]')) {
      node.hidden = false;
    }
    this.el.querySelector('.widget-apply').hidden = true;
    this.form.addEventListener('input', (event) => this.onInput(event));
    this.form.addEventListener('change', (event) => this.onInput(event, true));
    this.form.addEventListener('submit', (event) => { event.preventDefault(); this.request(); });
    // The share box's Copy buttons (their room is kept): loaded beside, so the widget starts as soon as before.
    import('./share.js').then((share) => share.enableShareBox(this.el));
    if (this.extra && this.extra.setup) this.extra.setup(this);
    enableHandles(this); // marks in the figure that drag and key the form's settings
    if (STATIC_EXPORT) this.fromAddress();
    new ResizeObserver(() => this.measure()).observe(this.svg.parentElement); // also measures once now
    this.el.dataset.ready = 'true'; // interactive now: the server answers until the worker is ready
    if (this.inWorker && this.el.dataset.mode === 'page') this.startWorker();
    else if (this.inWorker) { // the first touch starts it (onInput does too)
      const touched = () => this.startWorker();
      this.el.addEventListener('pointerdown', touched, { once: true, passive: true });
      this.form.addEventListener('focusin', touched, { once: true });
    }
  }

  // A static export's page or embed: the settings in its address (the server's first picture is
  // the default state's) go into the form, and the worker draws them; the share box gets the
  // export's own address.
  fromAddress() {
    if (this.ownsUrl && window.location.search) {
      const settings = Object.fromEntries(new URLSearchParams(window.location.search));
      for (const [name, value] of Object.entries(settings)) { // a set of checkboxes: "a,b" ticks a and b
        const boxes = this.form.querySelectorAll(`input[type="checkbox"][name="${CSS.escape(name)}"]`);
        for (const box of boxes) box.checked = value.split(',').includes(box.value);
      }
      this.showState(settings); // the other controls (the view then puts back what it made of them)
      this.startWorker();
    }
    this.updateShare(this.el.dataset.query);
  }

  startWorker() {
    if (!this.inWorker || this.workerStarted) return;
    this.workerStarted = true;
    mathCore().then((explainers) => explainers.ready).then(
      () => { this.workerReady = true; this.el.dataset.worker = 'ready'; this.request(); },
      () => { // no WebAssembly or no worker: the server keeps computing the same view
        this.workerFailed = true;
        this.el.dataset.worker = 'failed';
        this.engine.textContent = 'The in-page calculator could not start; each change is computed by the server instead.';
      },
    );
  }

  // The server can make this view only from the context it sent (a results file a reader loaded
  // into the page exists only here, so that view waits for the worker).
  serverCanAnswer() {
    if (STATIC_EXPORT) return false;
    return this.el.dataset.driver === 'server' || this.workerFailed
      || (!this.workerReady && JSON.stringify(this.context) === JSON.stringify(this.serverContext && JSON.parse(this.serverContext)));
  }

  onInput(event, committed = false) {
    const target = event.target;
    if (target.dataset.pair) { // a slider moves its number box, which carries the value
      const box = this.el.querySelector(`#${target.dataset.pair}`);
      box.value = sliderValue(target, box);
      if (target.dataset.scale === 'log') target.setAttribute('aria-valuetext', box.value);
    } else if (target.type === 'number' && this.el.querySelector(`[data-pair="${target.id}"]`)) {
      const slider = this.el.querySelector(`[data-pair="${target.id}"]`);
      if (Number(target.value) > 0 || slider.dataset.scale !== 'log') slider.value = sliderPosition(slider, target.value);
    }
    if (!target.name && !target.dataset.pair) return; // load boxes and share fields are not state
    if (this.extra && this.extra.onInput) this.extra.onInput(this, target);
    this.startWorker();
    // While a slider is dragged or a number typed, the summary changes quietly; the settled
    // value's summary is announced (the "change" event).
    this.summary.setAttribute('aria-live', committed ? 'polite' : 'off');
    this.committed = this.committed || committed;
    this.request();
  }

  // Ask for a new view; while one is being computed, remember only that another is wanted.
  request() {
    if (this.busy) { this.pending = true; return; }
    this.busy = true;
    this.el.setAttribute('aria-busy', 'true');
    const started = performance.now();
    this.compute({ ...readForm(this.form), ...(this.width ? { width: String(this.width) } : {}) })
      .then((view) => this.apply(view, started))
      .catch((error) => { this.engine.textContent = `Could not update: ${error.message || error}`; })
      .finally(() => {
        this.busy = false;
        if (this.pending) { this.pending = false; this.request(); return; }
        this.el.removeAttribute('aria-busy');
      });
  }

  async compute(state) {
    if (this.serverCanAnswer()) {
      const query = new URLSearchParams(state).toString();
      const response = await fetch(`/api/widgets/${this.view}?${query}`, { headers: { Accept: 'application/json' } });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || response.statusText);
      return body;
    }
    this.startWorker();
    const [explainers, shipped] = await Promise.all([mathCore(), STATIC_EXPORT && this.extra?.shipped?.(this, state)]);
    await explainers.ready;
    return explainers.view(this.view, state, shipped ? { ...this.context, shipped } : this.context);
  }

  apply(view, started) {
    // The server's first wide picture is drawn for the printed column (layout.DEFAULT_WIDTH is
    // PRINT_WIDTH): when the screen's is redrawn wider, a copy of it stays as the print copy, so a
    // page printed at once prints its charts legibly, with no request.
    const firstWide = this.svg.dataset.first && this.svg.viewBox.baseVal.width === PRINT_WIDTH ? this.svg.cloneNode(true) : null;
    const firstQuery = this.el.dataset.query;
    drawFigure(this.svg, view.figure);
    if (this.svg.dataset.first) { // the stand-ins' place is taken by the figure drawn for this width
      for (const other of this.el.querySelectorAll('svg[data-first]')) if (other !== this.svg) other.remove();
      delete this.svg.dataset.first;
      if (firstWide && view.width > PRINT_WIDTH) this.showPrintCopy(firstWide, firstQuery);
    }
    this.drawnWidth = view.width;
    this.el.dataset.drawnWidth = String(view.width);
    showSummary(this.summary, view.summary, view.for_engineers || []);
    if (view.messages.length) {
      const list = document.createElement('ul');
      paragraphs(list, view.messages, 'li');
      this.messages.replaceChildren(list);
    } else {
      this.messages.replaceChildren();
    }
    // Parts of the view as markup (escaped by the widget's Python, on the server or in the worker), swapped in whole.
    for (const [key, html] of Object.entries(view.fragments || {})) {
      this.el.querySelector(`[data-fragment="${key}"]`).innerHTML = html;
    }
    if (this.extra && this.extra.apply) this.extra.apply(this, view);
    if (!this.pending) this.showState(view.state); // a newer state is on its way: leave the controls alone
    this.el.dataset.query = view.query;
    this.updateShare(view.query);
    if (this.ownsUrl) {
      const url = new URL(window.location.href);
      url.search = view.query ? `?${view.query}` : '';
      window.history.replaceState(null, '', url);
    }
    this.schedulePrintFigure(view.width);
    this.el.dataset.renders = String(Number(this.el.dataset.renders || 0) + 1);
    this.el.dispatchEvent(new CustomEvent('widget:rendered', { detail: { view, ms: performance.now() - started } }));
  }

  // A figure drawn wider than the printed column gets a copy drawn for it, shown only in print
  // (widgets.css), made once the widget has been still for a moment (unless the copy it has shows
  // this state already).
  schedulePrintFigure(width) {
    clearTimeout(this.printTimer);
    if (!(width > PRINT_WIDTH)) {
      if (this.printSvg) { this.printSvg.remove(); this.printSvg = null; delete this.svg.dataset.printCopy; }
      return;
    }
    if (this.printSvg && this.printQuery === this.el.dataset.query) return;
    this.printTimer = setTimeout(() => {
      if (this.busy || this.pending) { this.schedulePrintFigure(width); return; }
      this.compute({ ...readForm(this.form), width: String(PRINT_WIDTH) }).then((view) => {
        const fig = view.figure;
        const svg = document.createElementNS(SVG_NS, 'svg');
        svg.setAttribute('width', fig.width);
        svg.setAttribute('height', fig.height);
        svg.setAttribute('viewBox', `0 0 ${fig.width} ${fig.height}`);
        svg.append(buildMarks(fig.marks));
        this.showPrintCopy(svg, view.query);
      }, () => {});
    }, PRINT_DELAY_MS);
  }

  // `svg` (drawn for PRINT_WIDTH, for the state `query`) becomes the figure's print copy.
  showPrintCopy(svg, query) {
    for (const name of ['data-first', 'data-role', 'role', 'aria-labelledby']) svg.removeAttribute(name);
    svg.querySelector('title')?.remove();
    svg.setAttribute('class', 'widget-figure widget-figure-print');
    svg.setAttribute('aria-hidden', 'true'); // the screen's figure carries the label
    // A copy for paper: nothing in it takes the keyboard's focus (the screen's figure does).
    svg.querySelectorAll('[tabindex]').forEach((mark) => mark.removeAttribute('tabindex'));
    if (this.printSvg) this.printSvg.replaceWith(svg);
    else this.svg.after(svg);
    this.printSvg = svg;
    this.printQuery = query;
    this.svg.dataset.printCopy = 'true';
  }

  // Put the checked state back into the controls: clamped values, a subject's size, percentages
  // (a percent setting's share goes into its box and slider in percent).
  showState(state) {
    for (const [name, value] of Object.entries(state)) {
      if (Array.isArray(value)) continue;
      const box = this.form.querySelector(`[data-percent-of="${name}"], [name="${name}"]:not([type="checkbox"]):not([type="hidden"])`);
      if (!box) continue;
      const text = box.name === name ? String(value) : boxText(box, value); // by its own name: in its own unit
      const typing = document.activeElement === box && box.type === 'number' && !this.committed;
      if (!typing && box.value !== text) box.value = text;
      const slider = this.el.querySelector(`[data-pair="${box.id}"]`);
      if (slider && !typing) slider.value = sliderPosition(slider, text);
      if (slider && slider.dataset.scale === 'log') slider.setAttribute('aria-valuetext', String(value));
      if (slider && box.dataset.percentOf) {
        const unit = this.el.querySelector(`#${box.id}-unit`)?.textContent || '%';
        slider.setAttribute('aria-valuetext', `${(100 * Number(value)).toFixed(1)}${unit === '%' ? '%' : ` ${unit}`}`);
      }
    }
    this.committed = false;
  }

  updateShare(query) {
    const suffix = query ? `?${query}` : '';
    // Absolute already from the server; relative in a static export, which knows no address of its own.
    const page = new URL(this.el.dataset.pageUrl, window.location.href).href + suffix;
    const embed = new URL(this.el.dataset.embedUrl, window.location.href).href + suffix;
    this.el.querySelector('[data-share="page"]').value = page;
    const open = this.el.querySelector('[data-share="open"]');
    if (open) open.href = page;
    const printed = this.el.querySelector('[data-share="print"]');
    printed.href = page;
    printed.textContent = page;
    const snippet = this.el.querySelector('[data-share="iframe"]');
    const lines = snippet.value.split('\n');
    lines[0] = this.el.dataset.iframe.replace('{src}', escapeAttribute(embed));
    snippet.value = lines.join('\n');
  }
}

for (const el of document.querySelectorAll('section.widget[data-widget]:not([data-driver="live"])')) {
  if (el.dataset.enhanced) continue;
  el.dataset.enhanced = 'true';
  const widget = new Widget(el);
  el.widget = widget;
  widget.start().catch((error) => { widget.engine.textContent = `This widget could not start: ${error.message || error}`; });
}
