// Run a stdlib-only Python test module inside Pyodide under Node, against the explainers wheel.
//
//   node tests/pyodide/run_in_pyodide.mjs WHEEL TEST_FILE
//
// The wheel is unpacked into Pyodide's site-packages exactly as the browser worker does it; the
// test module and runner.py are copied into Pyodide's file system; runner.py calls every test_*
// function and this script prints its JSON report as the last line of stdout.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..');
const [wheelPath, testPath] = process.argv.slice(2);
if (!wheelPath || !testPath) {
  console.error('usage: node tests/unit/pyodide/run_in_pyodide.mjs WHEEL TEST_FILE');
  process.exit(2);
}

const { loadPyodide } = await import(path.join(repo, 'node_modules', 'pyodide', 'pyodide.mjs'));
const started = performance.now();
const pyodide = await loadPyodide({ indexURL: path.join(repo, 'node_modules', 'pyodide') + path.sep });
const loaded = performance.now();

const wheel = readFileSync(wheelPath);
const sitePackages = pyodide.runPython('import sysconfig; sysconfig.get_paths()["purelib"]');
pyodide.unpackArchive(new Uint8Array(wheel.buffer, wheel.byteOffset, wheel.byteLength), 'wheel',
  { extractDir: sitePackages });
pyodide.FS.mkdirTree('/tests');
pyodide.FS.writeFile('/tests/runner.py', readFileSync(path.join(here, 'runner.py'), 'utf8'));
const moduleName = path.basename(testPath, '.py');
pyodide.FS.writeFile(`/tests/${moduleName}.py`, readFileSync(testPath, 'utf8'));

const report = JSON.parse(pyodide.runPython(`
import sys
sys.path.insert(0, "/tests")
import runner
runner.run_module(${JSON.stringify(moduleName)})
`));
report.load_ms = Math.round(loaded - started);
console.log(JSON.stringify(report));
