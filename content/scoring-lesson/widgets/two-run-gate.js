// Two-run gate: the reader's run files are read here as text and handed to the widget's Python
// view (in the page's worker), which parses them with the same reader as the command line.
async function readFiles(input) {
  return Promise.all([...input.files].map(async (file) => [file.name, await file.text()]));
}

export function setup(widget) {
  const back = widget.el.querySelector('[data-action="clear-runs"]');
  widget.el.querySelector('[data-action="compare-runs"]').addEventListener('click', async () => {
    const runs = {};
    for (const input of widget.el.querySelectorAll('input[data-run]')) {
      if (input.files.length) runs[input.dataset.run] = await readFiles(input);
    }
    if (!runs.production || !runs.candidate) {
      widget.engine.textContent = 'Choose a production run and a candidate run first.';
      return;
    }
    widget.engine.textContent = '';
    widget.context = { ...widget.context, runs };
    back.hidden = false;
    widget.request();
  });
  back.addEventListener('click', () => {
    const { runs, ...rest } = widget.context;
    widget.context = rest;
    back.hidden = true;
    widget.request();
  });
}
