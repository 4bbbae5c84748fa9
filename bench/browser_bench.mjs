// Shared by the browser benchmarks: start the real server (through tools/launcher.py), and record
// long main-thread tasks in the page.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Start the real server through the one launcher the tests use too (tools/launcher.py):
// `python3 -m tools.launcher --print-url` picks a free loopback port, starts `python3 app.py`,
// waits until `readyPath` answers and prints the base URL. Resolves to {base, child}; kill the
// child to stop the server (the launcher also stops it if this process dies and its stdin closes).
export function startServer(readyPath = '/') {
  const child = spawn('python3', ['-m', 'tools.launcher', '--print-url', '--until-stdin-closes', '--ready-path', readyPath],
    { cwd: repo, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (base) => resolve({ base: base.trim(), child }));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the server launcher exited with status ${code} before the server was up (its message is above)`)));
  });
}

// Injected before any page script: record long main-thread tasks (50 ms or more).
export function observeLongTasks() {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
  }).observe({ type: 'longtask', buffered: true });
}
