// Optional helper for pages that embed our widgets: add
//   <script src="https://<this site>/static/js/embed-resize.js" async></script>
// and every widget iframe takes the height its page reports, so it never shows a scroll bar.
(() => {
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.type !== 'annotated-widget:height' || !Number.isFinite(data.height)) return;
    for (const frame of document.querySelectorAll('iframe')) {
      if (frame.contentWindow !== event.source) continue;
      let origin = '';
      try { origin = new URL(frame.src, window.location.href).origin; } catch { return; }
      if (origin !== event.origin) return; // only the page the frame really shows may size it
      frame.height = String(Math.max(100, Math.min(5000, Math.round(data.height))));
      frame.dataset.reportedHeight = String(data.height);
    }
  });
})();
