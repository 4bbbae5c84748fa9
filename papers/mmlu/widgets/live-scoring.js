// "Run it yourself": enhance the server-rendered live-scoring form in place.
// Without this script the form posts to /mmlu/run and the server renders the result; with it,
// the same POST returns only the results panel (?fragment=1), which replaces the old one, while a
// progress indicator runs and the model's warm-up state is shown.

const POLL_MS = 1500;

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
  const index = root.querySelector('[data-ls-index]');
  const indexHint = root.querySelector('[data-ls-index-hint]');
  const preview = root.querySelector('[data-ls-preview]');
  const panels = root.querySelectorAll('[data-ls-panel]');
  const questionsUrl = root.dataset.apiQuestions;
  let warming = null;

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
    index.max = String(info.count - 1);
    setText(indexHint, `0 to ${info.count - 1}`);
    return info.count;
  }

  // Each choice of question gets a ticket; an answer that arrives after a newer choice is dropped,
  // so a slow earlier response can never overwrite what the reader has since typed.
  let latestChoice = 0;

  async function loadQuestion(query, ticket = ++latestChoice) {
    try {
      const q = await getJSON(`${questionsUrl}/${encodeURIComponent(subject.value)}?split=${split.value}&${query}`);
      if (ticket !== latestChoice) return;
      index.value = String(q.index);
      renderPreview(q);
    } catch (error) {
      previewMessage(error.message);
    }
  }

  async function onQuestionChange() {
    const ticket = ++latestChoice;
    try {
      const count = await updateSize();
      if (ticket !== latestChoice) return;
      if (!/^\d+$/.test(index.value) || Number(index.value) >= count) index.value = '0';
      await loadQuestion(`index=${index.value}`, ticket);
    } catch (error) {
      previewMessage(error.message);
    }
  }
  subject.addEventListener('change', onQuestionChange);
  split.addEventListener('change', onQuestionChange);
  index.addEventListener('change', onQuestionChange);
  // Typing a number is a newer choice too: a question still on its way must not overwrite it.
  index.addEventListener('input', () => { latestChoice += 1; });
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
        setText(status, 'Warming up: the model is loading (the first start converts its weights and takes longer).');
        return new Promise((resolve) => setTimeout(() => resolve(pollModel()), POLL_MS));
      }
      setText(status, state.state === 'failed' ? state.message : '');
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
    runButton.disabled = on;
    form.setAttribute('aria-busy', on ? 'true' : 'false');
    progress.hidden = !on;
  }

  async function run() {
    const started = performance.now();
    busy(true);
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
      setText(status, '');
      results.focus();
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
    run();
  });
}

document.querySelectorAll('[data-ls-widget]').forEach(enhance);
