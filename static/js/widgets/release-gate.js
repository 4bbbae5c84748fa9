// Release gate: besides the simulation, a reader can load two models' per-question results.
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

export function setup(widget) {
  const box = widget.el.querySelector('[data-role="results"]');
  widget.el.querySelector('[data-action="load-results"]').addEventListener('click', () => {
    try {
      widget.context = { ...widget.context, results: parseResults(box.value) };
      widget.engine.textContent = '';
      widget.request();
    } catch (error) {
      widget.engine.textContent = `Could not load the results: ${error.message}.`;
    }
  });
  widget.el.querySelector('[data-action="clear-results"]').addEventListener('click', () => {
    const { results, ...rest } = widget.context;
    widget.context = rest;
    widget.request();
  });
}
