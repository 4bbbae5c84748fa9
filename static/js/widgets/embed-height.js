// Inside an embed page: tell the framing page how tall the widget is, now and whenever it changes.
// Any site may frame these pages, so the message carries only the height and the widget's name.
const widget = document.querySelector('section.widget');
let last = 0;

function report() {
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height === last || window.parent === window) return;
  last = height;
  window.parent.postMessage({ type: 'annotated-widget:height', widget: widget ? widget.dataset.widget : '', height }, '*');
}

new ResizeObserver(report).observe(document.documentElement);
window.addEventListener('load', report);
