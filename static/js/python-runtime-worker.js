// The math core's browser half: a module Web Worker that runs the explainers package in Pyodide.
//
// It asks the JSON API where Pyodide and the explainers wheel live (both served from our own
// origin), loads them, and then answers batches of calls. Pyodide's start-up happens here, off
// the main thread, so the page never freezes. Talk to it through python-runtime.js.
//
// Messages in:  {id, calls: [{fn, args} | {view: 'document/widget', state, context}, ...]}
//               {id, snippet: code, page: the snippet as published} (a reader's edited snippet)
// Messages out: {type: 'ready', timings} | {type: 'failed', error}
//               {id, results: [{result} | {error, kind}, ...]} | {id, error}
//               {id, ran: {results, output, error, page, same}} (widgetkit/snippets.py's run_snippet)
//               {type: 'snapshot', made}, then {type: 'snapshot', made, stored, bytes}, or {type: 'snapshot', error}
//               (the memory snapshot made and stored for the next visit; times in ms since the epoch)

const workerStarted = performance.now();
const timings = {};
let python = null; // the Pyodide instance, once started

async function fetchOk(url) {
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response;
}

// Pyodide's memory snapshot (an experimental Pyodide API): after the first visit the worker keeps
// a copy of Python's memory, with explainers already imported, in Cache Storage, keyed by the
// Pyodide version and the wheel's digest. Restoring it skips Python's start-up and the imports. A
// snapshot that fails to load, or answers a probe call differently from the run that made it, is
// deleted and Pyodide starts the ordinary way.
//
// It is made before the worker says `ready`, from a Python that has run nothing of the page's, and
// handed to the browser at once, stored as it is, uncompressed (about 30 MiB). Making it takes
// about a tenth of a second, on the first visit only; in return, a reader who leaves as soon as
// the page answers still leaves it for the next visit, and a reader's edited snippet can never
// reach it.
// (Made later, once the worker was idle after `ready`, it was lost when a busy machine closed the
// page half a second after ready; compressing it took over a second.)
const SNAPSHOT_CACHE = 'explainers-pyodide-snapshot';
const PROBE = JSON.stringify([
  { fn: 'standard_error', args: { p: 0.25, n: 100 } },
  { fn: 'chance_band', args: { n: 100, method: 'exact' } },
  { fn: 'simulate_contamination', args: { accuracy: 0.5, leaked_fraction: 0.2, questions: 200 } },
]);

async function readSnapshot(key) {
  const cache = await caches.open(SNAPSHOT_CACHE);
  const hit = await cache.match(key);
  if (!hit) return null;
  return { bytes: new Uint8Array(await hit.arrayBuffer()), probe: hit.headers.get('X-Explainers-Probe') };
}

// The write is handed to the browser first, then any older snapshot is deleted (one per browser at
// most). In Chromium a write under way finishes even when the page closes during it, once the
// bytes have been handed over; `opened` is the cache opened while Pyodide loaded, so `put` is
// called in the same task that made the snapshot.
async function storeSnapshot(opened, key, bytes, probe) {
  const cache = await opened;
  await cache.put(key, new Response(bytes, { headers: { 'X-Explainers-Probe': probe } }));
  for (const old of await cache.keys()) if (old.url !== key) await cache.delete(old);
}

// Make the snapshot and store it, reporting both in {type: 'snapshot'} messages. A failure only
// costs the next visit its head start, so it is only reported, in the client's timings.
function saveSnapshot(pyodide, runBatch, opened, key) {
  const saved = (fields) => self.postMessage({ type: 'snapshot', ...fields });
  try {
    const probe = runBatch(PROBE);
    const bytes = pyodide.makeMemorySnapshot();
    const made = performance.timeOrigin + performance.now();
    storeSnapshot(opened, key, bytes, probe).then(
      () => saved({ made, stored: performance.timeOrigin + performance.now(), bytes: bytes.byteLength }),
      (error) => saved({ error: String(error) }),
    );
    saved({ made });
  } catch (error) {
    saved({ error: String(error) });
  }
}

// Unpack the pure wheel into site-packages: no micropip, no network beyond our own origin.
function unpackWheel(pyodide, wheel) {
  const sitePackages = pyodide.runPython('import sysconfig; sysconfig.get_paths()["purelib"]');
  pyodide.unpackArchive(wheel, 'wheel', { extractDir: sitePackages });
}

async function fromSnapshot(loadPyodide, indexURL, key, wheel) {
  try {
    const snapshot = await readSnapshot(key);
    if (!snapshot) return null;
    const pyodide = await loadPyodide({ indexURL, _loadSnapshot: snapshot.bytes });
    python = pyodide;
    // The snapshot holds Python's memory, not its files: modules first imported later (a document's
    // widget views) need the wheel's files again, and the import system must look afresh.
    unpackWheel(pyodide, wheel);
    pyodide.runPython('import importlib; importlib.invalidate_caches()');
    const runBatch = pyodide.pyimport('widgetkit.browser').run_batch;
    if (runBatch(PROBE) !== snapshot.probe) throw new Error('the snapshot answered the probe differently');
    return runBatch;
  } catch (error) {
    timings.snapshot_error = String(error);
    await caches.delete(SNAPSHOT_CACHE).catch(() => {});
    return null;
  }
}

async function loadRuntime() {
  // The index's addresses are read relative to the index itself: a static export (engine/export.py)
  // writes them relative, so that it works under any base path; the server writes them from the root.
  const index = new URL('../../api/python-runtime', import.meta.url);
  const urls = await (await fetchOk(index)).json();
  if (!urls.pyodide_module) throw new Error('this server has no Pyodide installed; use the JSON API');
  const resolve = (url) => new URL(url, index).href;
  const indexURL = resolve(urls.pyodide_index);
  // The key names the format too: a gzip-compressed snapshot of an earlier version is never read as raw.
  const snapshotKey = `${resolve(urls.wheel)}.pyodide-${urls.pyodide_version}.memory`;
  const canSnapshot = Boolean(self.caches);
  const [{ loadPyodide }, wheel] = await Promise.all([
    import(resolve(urls.pyodide_module)),
    fetchOk(resolve(urls.wheel)).then((r) => r.arrayBuffer()),
  ]);
  timings.fetched_ms = performance.now() - workerStarted;

  const restored = canSnapshot && await fromSnapshot(loadPyodide, indexURL, snapshotKey, wheel);
  if (restored) {
    timings.snapshot = 'restored';
    timings.pyodide_ms = timings.ready_ms = performance.now() - workerStarted;
    return restored;
  }
  const opened = canSnapshot && caches.open(SNAPSHOT_CACHE); // while Pyodide loads
  const pyodide = await loadPyodide({ indexURL, _makeSnapshot: canSnapshot });
  python = pyodide;
  timings.pyodide_ms = performance.now() - workerStarted;
  unpackWheel(pyodide, wheel);
  const runBatch = pyodide.pyimport('widgetkit.browser').run_batch;
  if (canSnapshot) saveSnapshot(pyodide, runBatch, opened, snapshotKey);
  timings.ready_ms = performance.now() - workerStarted;
  return runBatch;
}

const runtime = loadRuntime();
runtime.then(
  () => self.postMessage({ type: 'ready', timings }),
  (error) => self.postMessage({ type: 'failed', error: String(error && error.message ? error.message : error) }),
);

self.addEventListener('message', async (event) => {
  const { id, calls, snippet } = event.data || {};
  try {
    const runBatch = await runtime;
    if (typeof snippet === 'string') { // a reader's snippet (the snapshot was made before `ready`)
      const run = python.pyimport('widgetkit.snippets').run_snippet_json;
      self.postMessage({ id, ran: JSON.parse(run(snippet, event.data.page ?? null)) });
      return;
    }
    // One JSON string each way: a whole batch crosses the JavaScript/Python boundary once.
    const results = JSON.parse(runBatch(JSON.stringify(calls)));
    self.postMessage({ id, results });
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
});
