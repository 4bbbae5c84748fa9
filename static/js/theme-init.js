// Runs in <head> before the first paint: apply the theme the reader chose last time, if any.
// (Without a saved choice the page follows prefers-color-scheme through CSS alone.)
try {
  const saved = localStorage.getItem('theme');
  if (saved === 'dark' || saved === 'light') document.documentElement.dataset.theme = saved;
} catch (error) {
  // Storage can be blocked (private modes, strict settings); the system preference still applies.
}
