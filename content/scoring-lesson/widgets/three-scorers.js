// Same question, three scorers: the form is answered in place.
// Without this script the form posts to the widget's page (inside an embed, to the embed itself) and
// the server draws the widget with its answer. With it, the same post is sent by fetch, and the
// answer's form (a fresh token, the field a refusal names) and results replace the ones shown; the
// status line says what happened, and focus moves to the results, or to the field to fix.

import { enableShareBox } from '/static/js/widgets/share.js';

function enhance(root) {
  const status = root.querySelector('[data-ts-status-text]');
  const progress = root.querySelector('[data-ts-progress]');
  let running = false;

  function busy(form, on) {
    running = on;
    form.querySelector('[data-ts-run]').disabled = on;
    form.setAttribute('aria-busy', on ? 'true' : 'false');
    progress.hidden = !on;
  }

  async function answerTo(form) {
    const body = new FormData(form);
    // The lesson's copy posts to the widget's page; its headings must still fit the lesson.
    if (root.dataset.mode === 'inline') body.set('shown_in', 'inline');
    const response = await fetch(form.action, { method: 'POST', body, headers: { Accept: 'text/html' } });
    const page = new DOMParser().parseFromString(await response.text(), 'text/html');
    const answer = page.querySelector('section.widget[data-widget="three-scorers"]');
    if (!answer) { // not the widget: the site's own error page (a refused or oversized request)
      const said = page.querySelector('main p');
      throw new Error(said ? said.textContent.trim() : `the server answered ${response.status}`);
    }
    return answer;
  }

  root.addEventListener('submit', async (event) => {
    const form = event.target.closest('[data-ts-form]');
    if (!form) return;
    event.preventDefault();
    if (running) return;
    busy(form, true);
    status.classList.remove('visually-hidden');
    status.textContent = 'Scoring: the model reads the question six times and writes two answers, which can take a minute.';
    let answer;
    try {
      answer = await answerTo(form);
    } catch (error) {
      busy(form, false);
      status.textContent = `Not scored: ${error.message}`;
      return;
    }
    for (const part of ['[data-ts-form]', '[data-ts-results]']) {
      root.querySelector(part).replaceWith(document.adoptNode(answer.querySelector(part)));
    }
    progress.hidden = true;
    running = false;
    const said = root.querySelector('[data-ts-announce]');
    const refused = root.querySelector('[data-ts-error]');
    status.textContent = refused ? `Not scored: ${said.textContent}` : `Scored. ${said.textContent}`;
    status.classList.add('visually-hidden'); // for screen readers: the answer itself shows the same words
    const field = refused && refused.dataset.field ? root.querySelector(`#ts-${refused.dataset.field}`) : null;
    (field || root.querySelector('#ts-results-title')).focus();
  });
}

for (const root of document.querySelectorAll('section.widget[data-widget="three-scorers"]')) {
  enhance(root);
  enableShareBox(root);
}
