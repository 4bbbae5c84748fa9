// The math core in the browser: the same Python explainers package the server runs, in Pyodide,
// in a Web Worker (python-runtime-worker.js), behind a small promise client. The same worker also
// makes widget views (explainers.view), with the widget kit and the documents' widget modules.
//
//   import { explainers } from '/static/js/python-runtime.js';
//
//   await explainers.ready;                       // Pyodide and the wheel are loaded
//   const se = await explainers.call('standard_error', { p: 0.25, n: 100 });
//   const [band, ci] = await explainers.batch([   // one worker round trip for many calls
//     { fn: 'chance_band', args: { n: 100 } },
//     { fn: 'confidence_interval', args: { p: 0.3, n: 100, method: 'wilson' } },
//   ]);
//   const early = await explainers.viaServer('standard_error', { p: 0.25, n: 100 });  // JSON API
//
// Arguments are keyword objects with the Python parameter names; results are JSON values
// (numbers, strings, lists for tuples, objects for dicts). A bad argument rejects with an
// ExplainerError whose message names the argument, the same words the JSON API uses.
// explainers.status is 'loading', 'ready' or 'failed'. Until the worker is ready, show the
// server-rendered values (or ask viaServer); if it fails, the page keeps working without it.
// explainers.runSnippet(code, {page, timeoutMs}) runs a reader's edited snippet (the page's "Edit
// and run"); past the time limit the worker is stopped and a fresh one started (restart()), and the
// promise rejects with kind 'Timeout'.
// explainers.timings: when the worker was created, ready and first answered, its own start-up
// figures (worker), and when it saved its memory snapshot for the next visit (snapshot).

export class ExplainerError extends Error {
  constructor(message, { fn, kind, index } = {}) {
    super(message);
    this.name = 'ExplainerError';
    this.fn = fn;
    this.kind = kind;
    this.index = index;
  }
}

class ExplainersClient {
  constructor(workerUrl) {
    this.status = 'loading';
    this.timings = { created_ms: performance.now() };
    this._pending = new Map();
    this._nextId = 1;
    this._workerUrl = workerUrl;
    this.restarts = 0;
    this._start();
  }

  _start() {
    this.ready = new Promise((resolve, reject) => {
      this._settleReady = { resolve, reject };
    });
    this.ready.catch(() => {}); // a page that never awaits `ready` should not log an unhandled rejection
    let worker;
    try {
      worker = new Worker(this._workerUrl, { type: 'module' });
    } catch (error) {
      this._fail(String(error));
      return;
    }
    this._worker = worker;
    // A replaced worker's late messages are ignored.
    worker.addEventListener('message', (event) => { if (this._worker === worker) this._receive(event.data); });
    worker.addEventListener('error', (event) => {
      if (this._worker === worker) this._fail(event.message || 'the explainers worker failed to start');
    });
  }

  /** Stop the worker (a runaway computation) and start a fresh one; what was waiting rejects with `reason`. */
  restart(reason = 'Python was restarted') {
    if (this._worker) this._worker.terminate();
    this._worker = null;
    for (const { reject } of this._pending.values()) reject(new ExplainerError(reason, { kind: 'Timeout' }));
    this._pending.clear();
    this.status = 'loading';
    this.restarts += 1;
    this._start();
  }

  /** Run a reader's snippet (`page`: the snippet as published, for the comparison); see widgetkit/snippets.py. */
  async runSnippet(code, { page = null, timeoutMs = 10000 } = {}) {
    await this.ready;
    return new Promise((resolve, reject) => {
      const id = this._nextId++;
      const timer = setTimeout(() => {
        this.restart(`stopped after ${timeoutMs / 1000} s`);
      }, timeoutMs);
      const settle = (fn) => (value) => { clearTimeout(timer); fn(value); };
      this._pending.set(id, { resolve: settle(resolve), reject: settle(reject), calls: [] });
      this._worker.postMessage({ id, snippet: code, page });
    });
  }

  _fail(message) {
    this.status = 'failed';
    this._settleReady.reject(new ExplainerError(message, { kind: 'WorkerError' }));
    for (const { reject } of this._pending.values()) reject(new ExplainerError(message, { kind: 'WorkerError' }));
    this._pending.clear();
  }

  _receive(message) {
    if (message.type === 'ready') {
      this.status = 'ready';
      this.timings.ready_ms = performance.now();
      this.timings.worker = message.timings;
      this._settleReady.resolve();
      return;
    }
    if (message.type === 'failed') {
      this._fail(message.error);
      return;
    }
    if (message.type === 'snapshot') { // saved for the next visit (times on this page's clock)
      const onThisClock = (epochMs) => (epochMs === undefined ? undefined : epochMs - performance.timeOrigin);
      this.timings.snapshot = message.error ? { error: message.error }
        : { made_ms: onThisClock(message.made), stored_ms: onThisClock(message.stored), bytes: message.bytes };
      return;
    }
    const waiting = this._pending.get(message.id);
    if (!waiting) return;
    this._pending.delete(message.id);
    if (message.ran) {
      waiting.resolve(message.ran);
      return;
    }
    if (message.error) {
      waiting.reject(new ExplainerError(message.error, { kind: 'WorkerError' }));
      return;
    }
    const failedAt = message.results.findIndex((r) => 'error' in r);
    if (failedAt >= 0) {
      const failed = message.results[failedAt];
      const fn = waiting.calls[failedAt].fn || waiting.calls[failedAt].view;
      waiting.reject(new ExplainerError(failed.error, { fn, kind: failed.kind, index: failedAt }));
      return;
    }
    this.timings.first_result_ms ??= performance.now();
    waiting.resolve(message.results.map((r) => r.result));
  }

  /** Run many calls in one worker round trip; resolves to their results in order. */
  batch(calls) {
    if (this.status === 'failed') {
      return Promise.reject(new ExplainerError('the explainers worker is not available', { kind: 'WorkerError' }));
    }
    const plain = calls.map((call) => ('view' in call
      ? { view: call.view, state: call.state || {}, context: call.context || null }
      : { fn: call.fn, args: call.args || {}, ...(call.shown ? { shown: true } : {}) }));
    return new Promise((resolve, reject) => {
      const id = this._nextId++;
      this._pending.set(id, { resolve, reject, calls: plain });
      this._worker.postMessage({ id, calls: plain });
    });
  }

  /** Run one call; resolves to its result. */
  async call(fn, args = {}) {
    const [result] = await this.batch([{ fn, args }]);
    return result;
  }

  /** A widget's view ("<document>/<widget>"), made by the same Python the server renders it with. */
  async view(name, state = {}, context = null) {
    const [result] = await this.batch([{ view: name, state, context }]);
    return result;
  }

  /** The same call through the server's JSON API (for use before the worker is ready). */
  async viaServer(fn, args = {}) {
    const url = new URL(`../../api/explainers/${encodeURIComponent(fn)}`, import.meta.url);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(args),
      credentials: 'same-origin',
    });
    const body = await response.json();
    if (!response.ok) throw new ExplainerError(body.error, { fn, kind: `HTTP ${response.status}` });
    return body.result;
  }
}

export const explainers = new ExplainersClient(new URL('./python-runtime-worker.js', import.meta.url));
