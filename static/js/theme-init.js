// Runs in <head> before the first paint: apply the theme the reader chose last time, if any.
// (Without a saved choice the page follows prefers-color-scheme through CSS alone.) It also marks
// the page as scripted (<html class="js">), so controls that only work with the script take their
// place from the first paint instead of appearing later and pushing the figures down.
document.documentElement.classList.add('js');
try {
  const saved = localStorage.getItem('theme');
  if (saved === 'dark' || saved === 'light') document.documentElement.dataset.theme = saved;
} catch (error) {
  // Storage can be blocked (private modes, strict settings); the system preference still applies.
}
