// The flips view's behaviour in the page, shared by every document that shows it
// (benchmarks/flips-widget.html). The server draws the published runs' views; a reader's own files
// are read here by the gate's reader (gate.js) and handed, as the widget's context, to the same
// Python view in the page's worker, so they are sent nowhere. Each new view's tables and list are
// drawn again here from its rows, as text (never markup).
import { readRunInputs } from '/static/js/widgets/gate.js';

const LETTERS = 'ABCDEFGHIJ';
const pct = (x) => `${(100 * x).toFixed(2)} %`;
const prob = (x) => (x === null || x === undefined ? 'none given' : x.toFixed(2));
const signed = (x, digits) => `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function showError(widget, message) {
  const box = widget.el.querySelector('[data-role="load-error"]');
  box.textContent = message || '';
  box.hidden = !message;
}

// The published runs' views come from the server; loaded files make the view run in the page.
function useFiles(widget, runs) {
  widget.context = { published_runs: widget.published, runs };
  widget.el.dataset.driver = 'worker';
  widget.el.querySelector('[data-action="clear-results"]').hidden = false;
  // The published runs' filters may name what the reader's runs lack: start from all of them.
  for (const name of ['page', 'subject', 'group']) {
    const control = widget.form.querySelector(`[name="${name}"]`);
    if (control) control.value = name === 'page' ? '1' : 'any';
  }
  widget.request();
}

// The subject setting offers the subjects of the runs shown (a reader's files hold their own).
function showSubjects(widget, choices) {
  const select = widget.form.querySelector('select[name="subject"]');
  if (!select || !choices.length) return;
  const shown = [...select.options].map((option) => `${option.value}\t${option.textContent}`).join('\n');
  if (shown === choices.map(([value, label]) => `${value}\t${label}`).join('\n')) return;
  const chosen = select.value;
  select.replaceChildren(...choices.map(([value, label]) => {
    const option = element('option', label);
    option.value = value;
    return option;
  }));
  select.value = choices.some(([value]) => value === chosen) ? chosen : 'any';
}

export function setup(widget) {
  const box = widget.el.querySelector('.flips-load');
  widget.published = JSON.parse(box.dataset.published || '[]');
  widget.el.querySelector('[data-action="compare-runs"]').addEventListener('click', async () => {
    let runs;
    try {
      runs = await readRunInputs(widget);
    } catch (error) {
      showError(widget, error.message);
      return;
    }
    if (!runs.production || !runs.candidate) {
      showError(widget, 'Choose a production run and a candidate run first.');
      return;
    }
    showError(widget, '');
    useFiles(widget, runs);
  });
  const back = widget.el.querySelector('[data-action="clear-results"]');
  back.addEventListener('click', () => {
    widget.context = null;
    widget.el.dataset.driver = 'server';
    back.hidden = true;
    showError(widget, '');
    widget.request();
  });
  // Previous and next page: the page setting changes and the view is asked again (the links keep
  // working without this script, as addresses of the server's pages).
  widget.el.querySelector('[data-role="pages"]').addEventListener('click', (event) => {
    const link = event.target.closest('a[data-page]');
    const page = widget.form.querySelector('[name="page"]');
    if (!link || !page) return;
    event.preventDefault();
    page.value = link.dataset.page;
    widget.request();
    widget.el.querySelector('.flips-heading').focus({ preventScroll: false });
  });
}

function leanTables(widget, view) {
  const uid = `w-${widget.name}`;
  return view.lean.map((run) => {
    const region = element('div', null, 'table-scroll');
    region.tabIndex = 0;
    region.setAttribute('role', 'region');
    region.setAttribute('aria-labelledby', `${uid}-lean-${run.role}`);
    const table = element('table', null, 'data-table flips-lean');
    const caption = element('caption', `The ${run.role} run: ${pct(run.accuracy)} right; always answering its favourite `
      + `letter, ${run.favourite}, would score ${pct(run.favourite_accuracy)}`);
    caption.id = `${uid}-lean-${run.role}`;
    const head = element('thead');
    const headRow = element('tr');
    for (const title of ['Letter', 'Share of its answers', 'Share of the keys']) {
      const th = element('th', title);
      th.scope = 'col';
      headRow.append(th);
    }
    head.append(headRow);
    const body = element('tbody');
    const rows = run.rows.map((row) => [row.letter, pct(row.predicted), pct(row.key_share)]);
    if (run.no_answer) rows.push(['no letter', pct(run.no_answer), '']);
    for (const [letter, predicted, keys] of rows) {
      const tr = element('tr');
      const th = element('th', letter);
      th.scope = 'row';
      tr.append(th, element('td', predicted), element('td', keys));
      body.append(tr);
    }
    table.append(caption, head, body);
    region.append(table);
    return region;
  });
}

function subjectRow(row) {
  const tr = element('tr');
  const th = element('th', row.subject);
  th.scope = 'row';
  tr.append(th, ...[row.n, row.right_to_wrong, row.wrong_to_right, row.other_wrong].map((x) => element('td', String(x))),
    element('td', `${row.net >= 0 ? '+' : ''}${row.net}`), element('td', signed(100 * row.delta, 2)));
  return tr;
}

function card(row) {
  const li = element('li', null, `flip-card flip-${row.kind}`);
  const where = element('p', null, 'flip-where');
  where.append(element('strong', row.kind_words, 'flip-kind'), ` · ${row.subject}${row.number ? `, question ${row.number}` : ''}`);
  li.append(where, element('p', row.question || 'This run names the question by subject and number only; run it live to read it.', 'flip-question'));
  if (row.choices.length) {
    const choices = element('ol', null, 'flip-choices');
    choices.type = 'A';
    row.choices.forEach((choice, i) => {
      const item = element('li', choice);
      if (LETTERS[i] === row.key) item.append(' ', element('strong', '(key)'));
      choices.append(item);
    });
    li.append(choices);
  }
  const answers = element('ul', null, 'flip-answers');
  for (const run of row.runs) {
    const item = element('li', `${run.role[0].toUpperCase()}${run.role.slice(1)}: `);
    item.append(element('strong', run.answer), ` (${run.correct ? 'right' : 'wrong'}), its probability ${prob(run.probability)}; `
      + `the key's ${prob(run.key_probability)}`);
    answers.append(item);
  }
  const links = element('p', `Key ${row.key}${row.moved === null ? '' : `; the key's probability moved ${signed(row.moved, 2)}`}. `, 'flip-links');
  const live = element('a', 'Run it live');
  live.href = row.live;
  live.append(element('span', `: ${row.subject}${row.number ? `, question ${row.number}` : ''}`, 'visually-hidden'));
  links.append(live);
  li.append(answers, links);
  return li;
}

// Each new view: its error, the letter tables, the subjects' counts, the page of questions and the page links.
export function apply(widget, view) {
  showSubjects(widget, view.subject_choices);
  const note = widget.el.querySelector('[data-role="flips-error"]');
  note.textContent = view.error || '';
  note.hidden = !view.error;
  widget.el.querySelector('[data-role="lean"]').replaceChildren(...leanTables(widget, view));
  widget.el.querySelector('[data-role="subject-rows"]').replaceChildren(...view.subjects.map(subjectRow));
  const list = widget.el.querySelector('[data-role="flips-list"]');
  list.start = view.pages.first;
  list.replaceChildren(...(view.rows.length ? view.rows.map(card) : [element('li', 'No flipped question matches these filters.', 'flip-none')]));
  const heading = widget.el.querySelector('.flips-heading');
  heading.textContent = `Flipped questions${view.pages.shown ? `, page ${view.pages.page} of ${view.pages.of}` : ''}`;
  const pages = widget.el.querySelector('[data-role="pages"]');
  const links = [['previous', 'Previous page', -1, 'prev'], ['next', 'Next page', 1, 'next']]
    .filter(([key]) => view.page_links[key])
    .map(([key, words, step, rel]) => {
      const link = element('a', words);
      link.href = view.page_links[key];
      link.dataset.page = String(view.pages.page + step);
      link.rel = rel;
      return link;
    });
  pages.replaceChildren(...links);
}
