// The site's service worker (served as /service-worker.js by engine/offline.py, which writes the
// site's version in; a static export writes it beside its pages): what a reader has read works
// without the network.
//
// Its cache is named for the site's version. Installing saves the files any page may need (the
// index /api/offline lists them), and in a static export also Pyodide and the wheel; the page then
// asks it to save itself and everything it loaded (offline.js). Pages (and the runtime's index) are
// fetched from the network first, and from the cache when that fails; files from the cache first.
// The site's JSON answers (/api/…, but the runtime's index) and anything posted are never cached:
// what asks the live model needs the network. A new version installs beside the old one and, once
// active, deletes the older caches: the pages and files of two versions never mix.
const VERSION = '__SITE_VERSION__';
const PREFIX = 'papers-offline-';
const CACHE = `${PREFIX}${VERSION}`;
const SCOPE = new URL(self.registration.scope);
const INDEX = new URL('api/offline', SCOPE);
// When this version was saved (the page's note says it): a response of its own in the cache.
const SAVED_AT = new URL('api/offline-saved', SCOPE);
const KEPT_ANSWERS = ['api/python-runtime', 'api/offline'];

function cacheable(url) {
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return false;
  const path = url.pathname.slice(SCOPE.pathname.length);
  return !path.startsWith('api/') || KEPT_ANSWERS.includes(path);
}

// Files saved at once: a browser opens six connections to a host, and a page the reader opens while
// a copy is being saved (hundreds of files, Pyodide's among them) must not queue behind them all.
const SAVING_AT_ONCE = 4;

async function save(cache, urls) {
  // A file that fails leaves the others saved (the reader's copy is then partial, not none).
  const left = [...urls];
  const saver = async () => {
    for (let url = left.shift(); url !== undefined; url = left.shift()) {
      try {
        const response = await fetch(url, { cache: 'no-cache' });
        if (response.ok) await cache.put(url, response);
      } catch (error) { /* offline meanwhile: saved on a later visit */ }
    }
  };
  await Promise.all(Array.from({ length: SAVING_AT_ONCE }, saver));
}

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const index = await (await fetch(INDEX, { cache: 'no-cache' })).json();
    const resolve = (list) => list.map((url) => new URL(url, INDEX).href);
    await save(cache, resolve(index.saved));
    if (index.whole) await save(cache, resolve(index.runtime));
    await cache.put(SAVED_AT, new Response(JSON.stringify({ version: VERSION, saved: new Date().toISOString() }),
      { headers: { 'Content-Type': 'application/json' } }));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  const urls = (event.data?.save || []).map((url) => new URL(url, SCOPE)).filter(cacheable).map((url) => url.href);
  // Not held open with event.waitUntil: a new version's worker takes over only once this one has no
  // event in progress, and a page's save held it back for minutes in tests/browser/static-export.mjs
  // (the page asking is open meanwhile, and its new worker saves it again when it takes over).
  caches.open(CACHE).then((cache) => save(cache, urls))
    .then(() => event.source?.postMessage({ saved: urls.length, cache: CACHE }));
});

// A page shown offline may stand for the same page with other settings in its address (a widget
// page: its script reads them); a page fetched by a script must be the very one asked for.
async function fromNetworkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(request, response.clone());
    return response;
  } catch (error) {
    const kept = await cache.match(request) || (request.mode === 'navigate' && await cache.match(request, { ignoreSearch: true }));
    if (kept) return kept;
    return new Response('This page was not saved for reading offline, and the network is off.',
      { status: 503, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  }
}

async function fromCacheFirst(request) {
  const cache = await caches.open(CACHE);
  // A file's ?v= (its content's digest) is left out: within one version of the site it never changes.
  const kept = await cache.match(request, { ignoreSearch: true });
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok) await cache.put(request, response.clone());
  return response;
}

// A file (a script, a style sheet, Pyodide's, the wheel) rather than a page or an answer.
function isFile(url) {
  const last = url.pathname.split('/').pop();
  return last.includes('.') && !last.endsWith('.html');
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || !cacheable(url)) return;
  event.respondWith(request.mode !== 'navigate' && isFile(url) ? fromCacheFirst(request) : fromNetworkFirst(request));
});
