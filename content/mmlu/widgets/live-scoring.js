// "Run it yourself": enhance the server-rendered live-scoring form in place.
// Without this script the form posts to /mmlu/run and the server renders the result; with it,
// the same POST returns only the results panel (?fragment=1), which replaces the old one, while a
// progress indicator runs and the model's warm-up state is shown. A failed run's panel lists its
// problems by field (data-problem-for); each is then shown beside its field, which is marked
// invalid, and the first such field takes the focus. The Run button keeps the focus while the
// model works: it is marked aria-disabled, not disabled (a disabled button drops the focus to the
// page), and a second press only says that the first is still running.
// Questions are numbered from 1 here, as on every page; the questions API counts from 0.

import { enableShareBox } from '/static/js/widgets/share.js';

const POLL_MS = 1500;
const WARMING = 'Warming up: the model is loading (the first start converts its weights and takes longer).';
const SCORING = 'Scoring: the model is reading the prompt. Its answer will appear below the form.';

function setText(el, text) { if (el) el.textContent = text; }

async function getJSON(url, options = {}) {
  const response = await fetch(url, { headers: { Accept: 'application/json' }, ...options });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error || `The server answered ${response.status}.`);
  return body;
}

function enhance(root) {
  const form = root.querySelector('[data-ls-form]');
  const results = root.querySelector('[data-ls-results]');
  const status = root.querySelector('[data-ls-status]');
  const progress = root.querySelector('[data-ls-progress]');
  const progressText = root.querySelector('[data-ls-progress-text]');
  const runButton = root.querySelector('[data-ls-run]');
  const subject = root.querySelector('[data-ls-subject]');
  const split = root.querySelector('[data-ls-split]');
  const number = root.querySelector('[data-ls-number]');
  const numberHint = root.querySelector('[data-ls-number-hint]');
  const preview = root.querySelector('[data-ls-preview]');
  const panels = root.querySelectorAll('[data-ls-panel]');
  const questionsUrl = root.dataset.apiQuestions;
  let warming = null;
  let running = false;
  enableShareBox(root);

  // -- problems beside their fields ----------------------------------------------------------------
  function showProblem(control, words) {
    const field = root.querySelector(`#${control}`);
    const message = root.querySelector(`[data-field-error="${control}"]`);
    if (!field || !message) return null;
    field.setAttribute('aria-invalid', 'true');
    message.textContent = words;
    message.hidden = false;
    return field;
  }

  function clearProblem(field) {
    const message = root.querySelector(`[data-field-error="${field.id}"]`);
    field.removeAttribute('aria-invalid');
    if (message) {
      message.textContent = '';
      message.hidden = true;
    }
  }

  // The results panel's list of problems, placed on the fields; the first field gets the focus.
  function placeProblems() {
    root.querySelectorAll('[aria-invalid="true"]').forEach(clearProblem);
    const fields = [...results.querySelectorAll('[data-problem-for]')]
      .map((item) => showProblem(item.dataset.problemFor, item.textContent.trim()))
      .filter(Boolean);
    return fields[0] || null;
  }
  // A field the reader changes is no longer marked: the next run checks it again.
  form.addEventListener('input', (event) => { if (event.target.id) clearProblem(event.target); });

  // -- the own question's subject ------------------------------------------------------------------
  const filed = root.querySelectorAll('[data-ls-filed]');
  subject.addEventListener('change', () => {
    filed.forEach((el) => setText(el, subject.selectedOptions[0].textContent));
  });

  // -- which question: show only the chosen fieldset ------------------------------------------
  function showSource() {
    const chosen = form.querySelector('[data-ls-source]:checked')?.value || 'real';
    panels.forEach((panel) => { panel.hidden = panel.dataset.lsPanel !== chosen; });
  }
  form.querySelectorAll('[data-ls-source]').forEach((radio) => radio.addEventListener('change', showSource));
  showSource();

  // -- the real question's preview -------------------------------------------------------------
  function renderPreview(q) {
    preview.replaceChildren();
    const text = document.createElement('p');
    text.className = 'ls-preview-q';
    text.textContent = q.question;
    const list = document.createElement('ol');
    list.className = 'ls-preview-choices';
    list.type = 'A';
    q.choices.forEach((choice) => {
      const item = document.createElement('li');
      item.textContent = choice;
      list.append(item);
    });
    preview.append(text, list);
  }

  function previewMessage(message) {
    preview.replaceChildren();
    const p = document.createElement('p');
    p.className = 'ls-hint';
    p.textContent = message;
    preview.append(p);
  }

  async function updateSize() {
    const info = await getJSON(`${questionsUrl}/${encodeURIComponent(subject.value)}?split=${split.value}&limit=1`);
    number.max = String(info.count);
    setText(numberHint, `1 to ${info.count.toLocaleString('en')}`);
    return info.count;
  }

  // Each choice of question gets a ticket; an answer that arrives after a newer choice is dropped,
  // so a slow earlier response can never overwrite what the reader has since typed.
  let latestChoice = 0;

  async function loadQuestion(query, ticket = ++latestChoice) {
    try {
      const q = await getJSON(`${questionsUrl}/${encodeURIComponent(subject.value)}?split=${split.value}&${query}`);
      if (ticket !== latestChoice) return;
      number.value = String(q.index + 1);
      clearProblem(number);
      renderPreview(q);
    } catch (error) {
      previewMessage(error.message);
    }
  }

  async function onQuestionChange() {
    const ticket = ++latestChoice;
    // The printed example answers the question the page came with, not this one.
    root.querySelector('.ls-example')?.remove();
    try {
      const count = await updateSize();
      if (ticket !== latestChoice) return;
      const typed = Number(number.value);
      if (!/^\d+$/.test(number.value) || typed < 1 || typed > count) {
        // Not a question of this split: say so beside the field rather than silently changing it.
        const shown = count.toLocaleString('en');
        showProblem(number.id, `Type a question number from 1 to ${shown}: ${subject.selectedOptions[0].textContent} `
          + `has ${shown} questions in its ${split.value} split.`);
        previewMessage('Choose a question number to see the question.');
        return;
      }
      await loadQuestion(`index=${typed - 1}`, ticket);
    } catch (error) {
      previewMessage(error.message);
    }
  }
  subject.addEventListener('change', onQuestionChange);
  split.addEventListener('change', onQuestionChange);
  number.addEventListener('change', onQuestionChange);
  // Typing a number is a newer choice too: a question still on its way must not overwrite it.
  number.addEventListener('input', () => { latestChoice += 1; });
  const randomButton = root.querySelector('[data-ls-random]');
  // With the script, Random only picks a question; as a plain button it is also no longer the
  // form's default button, so Enter in a field runs the model.
  randomButton.type = 'button';
  randomButton.addEventListener('click', async () => {
    form.querySelector('[data-ls-source][value="real"]').checked = true;
    showSource();
    await updateSize().catch(() => {});
    await loadQuestion('random=1');
  });

  // -- warming the model up -----------------------------------------------------------------------
  async function pollModel() {
    try {
      const state = await getJSON(root.dataset.apiModel);
      root.dataset.state = state.state;
      if (state.state === 'loading') {
        setText(status, WARMING);
        return new Promise((resolve) => setTimeout(() => resolve(pollModel()), POLL_MS));
      }
      if (state.state === 'failed') setText(status, state.message);
      else if (status.textContent === WARMING) setText(status, running ? SCORING : '');
      return state;
    } catch (error) {
      setText(status, error.message);
      return null;
    }
  }

  function warmUp() {
    if (!warming) {
      warming = getJSON(root.dataset.apiLoad, { method: 'POST' }).then(pollModel).catch((error) => {
        setText(status, error.message);
        warming = null;
      });
    }
    return warming;
  }
  form.addEventListener('focusin', warmUp, { once: true });

  // -- running ----------------------------------------------------------------------------------
  function busy(on) {
    running = on;
    runButton.setAttribute('aria-disabled', on ? 'true' : 'false');
    results.setAttribute('aria-busy', on ? 'true' : 'false');
    progress.hidden = !on;
  }

  async function run() {
    const started = performance.now();
    busy(true);
    setText(status, SCORING);
    const tick = setInterval(() => {
      const seconds = ((performance.now() - started) / 1000).toFixed(0);
      const what = root.dataset.state === 'loading' ? 'Warming up the model' : 'Scoring';
      setText(progressText, `${what}… ${seconds} s`);
    }, 500);
    setText(progressText, 'Scoring…');
    warmUp();
    try {
      for (;;) {
        const body = new URLSearchParams(new FormData(form));
        body.set('action', 'run');
        const response = await fetch(`${form.getAttribute('action')}?fragment=1`, {
          method: 'POST', body, headers: { Accept: 'text/html' },
        });
        if (!response.ok) throw new Error(`the server answered ${response.status}`);
        const html = await response.text();
        const panel = new DOMParser().parseFromString(html, 'text/html').querySelector('[data-ls-error]');
        const retry = Number(panel?.dataset.retryAfter || 0);
        if (panel?.dataset.state === 'loading' && retry > 0) {
          root.dataset.state = 'loading';
          await new Promise((resolve) => setTimeout(resolve, retry * 1000));
          continue;
        }
        results.innerHTML = html; // our own server's escaped template output
        break;
      }
      const invalidField = placeProblems();
      const verdict = results.querySelector('[data-ls-verdict]');
      const said = verdict ? `Scored. ${verdict.textContent.replace(/\s+/g, ' ').trim()}.` : 'The question was not scored.';
      const caution = results.querySelector('[data-ls-caution-headline]');
      setText(status, caution ? `${said} ${caution.textContent}` : said);
      (invalidField || results).focus();
    } catch (error) {
      results.replaceChildren();
      const box = document.createElement('div');
      box.className = 'ls-error';
      box.setAttribute('role', 'alert');
      box.textContent = `The question could not be scored: ${error.message}. Check the connection and try again.`;
      results.append(box);
    } finally {
      clearInterval(tick);
      busy(false);
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (running) {
      setText(status, 'Still scoring the question before; its answer will appear below the form.');
      return;
    }
    run();
  });
}

document.querySelectorAll('[data-ls-widget]').forEach(enhance);
