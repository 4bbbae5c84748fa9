// The release gate's loaders, shared by every document that shows it (templates/widgets/_gate.html).
// The reader's files and pasted lines are read here as text and handed to the widget's Python view
// (in the page's worker, or the server's widget route before it starts), which parses them with the
// same reader as the command line. A file that cannot be read is an error next to the inputs, with
// the chart left empty.
// A gzipped file (the site publishes its runs as .jsonl.gz) is unzipped here too, by the browser's own
// DecompressionStream; its name loses the .gz, so a harness file keeps the name its task is read from.
async function fileText(file) {
  if (!file.name.endsWith('.gz')) return [file.name, await file.text()];
  try {
    return [file.name.slice(0, -3), await new Response(file.stream().pipeThrough(new DecompressionStream('gzip'))).text()];
  } catch {
    throw new Error(`${file.name} is not a gzip file that can be unzipped; choose the .jsonl file itself, or a whole .jsonl.gz.`);
  }
}

export async function readFiles(input) {
  return Promise.all([...input.files].map(fileText));
}

function withoutLoaded(context) {
  const { runs, pasted, results, ...rest } = context;
  return rest;
}

function showError(widget, message) {
  const box = widget.el.querySelector('[data-role="load-error"]');
  box.textContent = message || '';
  box.hidden = !message;
}

function use(widget, loaded) {
  widget.context = { ...withoutLoaded(widget.context), ...loaded };
  widget.el.querySelector('[data-action="clear-results"]').hidden = false;
  widget.request();
}

export function setup(widget) {
  widget.el.querySelector('[data-action="compare-runs"]').addEventListener('click', async () => {
    const runs = {};
    try {
      for (const input of widget.el.querySelectorAll('input[data-run]')) {
        if (input.files.length) runs[input.dataset.run] = await readFiles(input);
      }
    } catch (error) {
      showError(widget, error.message);
      return;
    }
    if (!runs.production || !runs.candidate) {
      showError(widget, 'Choose a production run and a candidate run first.');
      return;
    }
    use(widget, { runs });
  });
  widget.el.querySelector('[data-action="load-results"]').addEventListener('click', () => {
    use(widget, { pasted: widget.el.querySelector('[data-role="results"]').value });
  });
  const back = widget.el.querySelector('[data-action="clear-results"]');
  back.addEventListener('click', () => {
    widget.context = withoutLoaded(widget.context);
    back.hidden = true;
    showError(widget, '');
    widget.request();
  });
}

// Each new view: its error (if any) beside the inputs, and the per-subject table for screen readers.
export function apply(widget, view) {
  showError(widget, view.error);
  const body = widget.el.querySelector('[data-role="subject-table"] tbody');
  if (!body) return;
  body.replaceChildren(...(view.rows || []).map((row) => {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = row.subject;
    const change = document.createElement('td');
    change.textContent = `${row.delta >= 0 ? '+' : ''}${(row.delta * 100).toFixed(1)}`;
    const n = document.createElement('td');
    n.textContent = String(row.n);
    tr.append(th, change, n);
    return tr;
  }));
}
