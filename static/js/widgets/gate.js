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

// The error shows by what was used: the file inputs or the paste box (the other box is emptied).
function showError(widget, message) {
  for (const box of widget.el.querySelectorAll('[data-role="load-error"]')) {
    const here = Boolean(message) && box.dataset.from === (widget.loadedFrom || 'files');
    box.textContent = here ? message : '';
    box.hidden = !here;
  }
}

// "Which two runs" names what is drawn: while the reader's own runs are, an option of their names
// is chosen, with the example's value (the view draws the loaded runs whatever the source says),
// so the settings and the link stay the example's; choosing any other option goes back to it.
function nameLoaded(widget, words) {
  const select = widget.el.querySelector('select[name="source"]');
  if (!select) return;
  let option = select.querySelector('option[data-loaded]');
  if (!words) {
    if (option) { select.value = option.value; option.remove(); }
    return;
  }
  if (!option) {
    option = document.createElement('option');
    option.dataset.loaded = '';
    option.value = select.value;
    select.prepend(option);
  }
  option.textContent = words;
  option.selected = true;
}

function namesOf(files) {
  return files.length === 1 ? files[0][0] : `${files[0][0]} and ${files.length - 1} more`;
}

function use(widget, loaded, from) {
  widget.loadedFrom = from;
  widget.context = { ...withoutLoaded(widget.context), ...loaded };
  widget.el.querySelector('[data-action="clear-results"]').hidden = false;
  nameLoaded(widget, loaded.runs
    ? `your files: ${namesOf(loaded.runs.candidate)} vs ${namesOf(loaded.runs.production)}`
    : 'your pasted results');
  widget.request();
}

function backToExamples(widget) {
  widget.context = withoutLoaded(widget.context);
  widget.el.querySelector('[data-action="clear-results"]').hidden = true;
  showError(widget, '');
  nameLoaded(widget, null);
}

// The runs a widget's file inputs hold, by role ({production: [[name, text], ...], ...}); a file
// that cannot be read throws, with its name.
export async function readRunInputs(widget) {
  const runs = {};
  for (const input of widget.el.querySelectorAll('input[data-run]')) {
    if (input.files.length) runs[input.dataset.run] = await readFiles(input);
  }
  return runs;
}

export function setup(widget) {
  widget.el.querySelector('[data-action="compare-runs"]').addEventListener('click', async () => {
    let runs;
    try {
      runs = await readRunInputs(widget);
    } catch (error) {
      widget.loadedFrom = 'files';
      showError(widget, error.message);
      return;
    }
    if (!runs.production || !runs.candidate) {
      widget.loadedFrom = 'files';
      showError(widget, 'Choose a production run and a candidate run first.');
      return;
    }
    use(widget, { runs }, 'files');
  });
  widget.el.querySelector('[data-action="load-results"]').addEventListener('click', () => {
    use(widget, { pasted: widget.el.querySelector('[data-role="results"]').value }, 'paste');
  });
  widget.el.querySelector('[data-action="clear-results"]').addEventListener('click', () => {
    backToExamples(widget);
    widget.request();
  });
}

// Choosing an example in "Which two runs" while the reader's runs are drawn goes back to the examples.
export function onInput(widget, target) {
  const loaded = widget.el.querySelector('option[data-loaded]');
  if (target.name !== 'source' || !loaded || loaded.selected) return;
  const chosen = target.value;
  backToExamples(widget);
  target.value = chosen;
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
