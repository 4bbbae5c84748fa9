// Release gate: besides the simulation, a reader can load two models' per-question results.
import { parseJsonLine } from '/static/js/widgets/jsonl.js';

function parseResults(text) {
  const subjects = [];
  const baseline = [];
  const candidate = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const parts = line.split(/[,;\t]/).map((p) => p.trim());
    if (parts.length !== 3 || !parts[0] || !/^(0|1)$/.test(parts[1]) || !/^(0|1)$/.test(parts[2])) {
      throw new Error(`line ${i + 1} should look like “anatomy, 1, 0” (subject, production, candidate)`);
    }
    subjects.push(parts[0]);
    baseline.push(Number(parts[1]));
    candidate.push(Number(parts[2]));
  });
  return { subjects, baseline, candidate };
}

// Pair two runs of `python -m engine mmlu evaluate` question by question (subject, split,
// index); questions in only one run are left out.
async function pairRuns(baselineFile, candidateFile) {
  if (!baselineFile || !candidateFile) throw new Error('choose both a production and a candidate file');
  const read = async (file) => {
    const rows = new Map();
    (await file.text()).split(/\r?\n/).forEach((line, i) => {
      if (!line.trim()) return;
      const row = parseJsonLine(line, i);
      if (typeof row.subject !== 'string' || typeof row.correct !== 'boolean') {
        throw new Error(`${file.name} line ${i + 1} has no "subject" and true/false "correct"`);
      }
      rows.set(`${row.subject}\u0000${row.split}\u0000${row.index}`, row);
    });
    return rows;
  };
  const [baseline, candidate] = [await read(baselineFile), await read(candidateFile)];
  const keys = [...baseline.keys()].filter((key) => candidate.has(key)).sort();
  if (!keys.length) throw new Error('the two files share no questions');
  return {
    subjects: keys.map((key) => baseline.get(key).subject),
    baseline: keys.map((key) => (baseline.get(key).correct ? 1 : 0)),
    candidate: keys.map((key) => (candidate.get(key).correct ? 1 : 0)),
  };
}

// "Back to the simulation" is offered only while loaded results are shown.
function useResults(widget, results) {
  widget.context = { ...widget.context, results };
  widget.engine.textContent = '';
  widget.el.querySelector('[data-action="clear-results"]').hidden = false;
  widget.request();
}

export function setup(widget) {
  const box = widget.el.querySelector('[data-role="results"]');
  widget.el.querySelector('[data-action="load-results"]').addEventListener('click', () => {
    try {
      useResults(widget, parseResults(box.value));
    } catch (error) {
      widget.engine.textContent = `Could not load the results: ${error.message}.`;
    }
  });
  widget.el.querySelector('[data-action="compare-runs"]').addEventListener('click', async () => {
    const file = (role) => widget.el.querySelector(`[data-role="${role}"]`).files[0];
    try {
      useResults(widget, await pairRuns(file('baseline-file'), file('candidate-file')));
    } catch (error) {
      widget.engine.textContent = `Could not compare the runs: ${error.message}.`;
    }
  });
  const back = widget.el.querySelector('[data-action="clear-results"]');
  back.addEventListener('click', () => {
    const { results, ...rest } = widget.context;
    widget.context = rest;
    back.hidden = true;
    widget.request();
  });
}
