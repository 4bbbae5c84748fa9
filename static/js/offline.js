// Reading offline (static/js/service-worker.js): registers the site's service worker, asks it to
// save this page and everything the page loaded, and says in the page's footer when the offline
// copy was saved and what needs the network. Imported by site.js once the page has loaded.
const SAVED_AT = 'api/offline-saved';

function when(iso) {
  return new Date(iso).toLocaleString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export async function saveForOffline(note) {
  const address = document.documentElement.dataset.serviceWorker;
  if (!address || !('serviceWorker' in navigator) || !window.caches) return;
  const registration = await navigator.serviceWorker.register(new URL(address, document.baseURI));
  await navigator.serviceWorker.ready;
  const worker = registration.active;
  const loaded = performance.getEntriesByType('resource').map((entry) => entry.name);
  await new Promise((resolve) => {
    navigator.serviceWorker.addEventListener('message', resolve, { once: true });
    worker.postMessage({ save: [window.location.href, ...loaded] });
  });
  const marker = await caches.match(new URL(SAVED_AT, registration.scope));
  if (!marker) return;
  const saved = await marker.json();
  note.textContent = `Saved for reading offline on ${when(saved.saved)}: without the network this page, its figures `
    + 'and its code still work; what asks the live language model (Run it yourself, the three scorers) needs the network.';
  note.dataset.version = saved.version;
  note.hidden = false;
}
