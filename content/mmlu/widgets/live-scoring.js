// "Run it yourself": enhance the server-rendered live-scoring form in place.
// Running the model, the status line, the progress, problems beside their fields and the model's
// warm-up are every live form's (static/js/widgets/live-form.js); this script adds what only this
// form has: the choice between a real question and the reader's own, and the real question's preview.
// Questions are numbered from 1 here, as on every page; the questions API counts from 0.

import { enableShareBox } from '/static/js/widgets/share.js';
import { getJSON, liveForm, setText } from '/static/js/widgets/live-form.js';

const WORDS = {
  running: 'Scoring started; its answer will appear below the form.',
  busy: 'Still scoring the question before; its answer will appear below the form.',
};

function enhance(root) {
  const form = root.querySelector('[data-ls-form]');
  const subject = root.querySelector('[data-ls-subject]');
  const split = root.querySelector('[data-ls-split]');
  const number = root.querySelector('[data-ls-number]');
  const numberHint = root.querySelector('[data-ls-number-hint]');
  const preview = root.querySelector('[data-ls-preview]');
  const panels = root.querySelectorAll('[data-ls-panel]');
  const questionsUrl = root.dataset.apiQuestions;
  const { showProblem, clearProblem } = liveForm(root, { form, words: WORDS });
  enableShareBox(root);

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
}

document.querySelectorAll('[data-ls-widget]').forEach(enhance);
