// Optional helper for pages that embed our widgets: add
//   <script src="https://<this site>/static/js/embed-resize.js" async></script>
// and every widget iframe takes the height its page reports, so it never shows a scroll bar; a frame
// with data-max-height="N" (oEmbed's maxheight) grows to N pixels at most, and scrolls past it.
(() => {
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.type !== 'annotated-widget:height' || !Number.isFinite(data.height)) return;
    for (const frame of document.querySelectorAll('iframe')) {
      if (frame.contentWindow !== event.source) continue;
      let origin = '';
      try { origin = new URL(frame.src, window.location.href).origin; } catch { return; }
      if (origin !== event.origin) return; // only the page the frame really shows may size it
      const most = Number(frame.dataset.maxHeight) > 0 ? Math.min(5000, Number(frame.dataset.maxHeight)) : 5000;
      frame.height = String(Math.max(Math.min(100, most), Math.min(most, Math.round(data.height))));
      frame.dataset.reportedHeight = String(data.height);
    }
  });
})();
