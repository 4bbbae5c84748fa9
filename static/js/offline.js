// Reading offline (static/js/service-worker.js): registers the site's service worker, asks it to
// save this page and everything the page loaded, and says in the page's footer when the offline
// copy was saved and what needs the network. Imported by site.js once the page has loaded.
const SAVED_AT = 'api/offline-saved';

function when(iso) {
  return new Date(iso).toLocaleString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

// Asks the active worker to save this page and everything it loaded, then says when its copy was saved.
async function saveWith(registration, note) {
  const worker = registration.active;
  if (!worker) return;
  const loaded = performance.getEntriesByType('resource').map((entry) => entry.name);
  const reply = await new Promise((resolve) => {
    const answered = (event) => {
      if (event.source !== worker) return;
      navigator.serviceWorker.removeEventListener('message', answered);
      resolve(event.data);
    };
    navigator.serviceWorker.addEventListener('message', answered);
    worker.postMessage({ save: [window.location.href, ...loaded] });
  });
  // The worker's own cache: a new version takes over before the older caches are deleted.
  const marker = await caches.match(new URL(SAVED_AT, registration.scope), { cacheName: reply.cache });
  if (!marker) return;
  const saved = await marker.json();
  note.textContent = `Saved for reading offline on ${when(saved.saved)}: without the network this page, its figures `
    + 'and its code still work; what asks the live language model (Run it yourself, the three scorers) needs the network.';
  note.dataset.version = saved.version;
  note.hidden = false;
}

export async function saveForOffline(note) {
  const address = document.documentElement.dataset.serviceWorker;
  if (!address || !('serviceWorker' in navigator) || !window.caches) return;
  const registration = await navigator.serviceWorker.register(new URL(address, document.baseURI));
  await navigator.serviceWorker.ready;
  // A new version of the site, whose worker installed on this visit, takes over with a copy of its
  // own (the older one is deleted): this page is saved into it too, and the note names it.
  navigator.serviceWorker.addEventListener('controllerchange', () => { saveWith(registration, note).catch(() => {}); });
  await saveWith(registration, note);
}
