// Shared by the browser benchmarks: start the real server on a free loopback port, and record
// long main-thread tasks in the page.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Start `python3 app.py`; resolves to {base, child} once `readyPath` answers 200.
export async function startServer(readyPath) {
  const port = await freePort();
  const child = spawn('python3', ['app.py', '--port', String(port)], { cwd: repo, stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i += 1) {
    try {
      if ((await fetch(`${base}${readyPath}`)).ok) return { base, child };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error('the server did not start');
}

// Injected before any page script: record long main-thread tasks (50 ms or more).
export function observeLongTasks() {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
  }).observe({ type: 'longtask', buffered: true });
}
