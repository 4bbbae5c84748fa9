// A live, model-backed form, enhanced in place: every benchmark's page that scores questions on the
// app's model (each document's live scoring or question browser) uses this one component.
// Without JavaScript the form posts and the server renders the whole page with the result; with it,
// the same POST is sent with ?fragment=1 and only the results panel comes back (always a 200: the
// panel's data-status, data-state and data-retry-after carry the real answer), which replaces the
// old one in place: no page load, no jump to the top. While the model works, a progress line says
// what the reader waits for and counts the seconds ("Scoring: the model is reading the prompt · 12 s";
// it is brought on screen when it appears, as on a phone the button may sit at the bottom edge), the
// status line (role="status") says once what is happening, and the model's warm-up is followed. A failed run's panel lists its problems by field (data-problem-for); each is shown
// beside its field, which is marked invalid, and the first such field takes the focus (placeProblems,
// also for a page's other forms that answer in place). The run
// button keeps the focus while the model works: it is marked aria-disabled, not disabled (a
// disabled button drops the focus to the page), and a second press only says the first still runs.
// The server side is benchmarks/server/live_form.py and live-results.html; styles static/css/live-form.css.

const POLL_MS = 1500;
export const WARMING = 'Warming up: the model is loading (the first start converts its weights and takes longer).';
const WARMING_SHORT = 'Warming up: the model is loading';
const WAITING = 'Scoring: the model is reading the prompt';

export function setText(el, text) { if (el) el.textContent = text; }

export async function getJSON(url, options = {}) {
  const response = await fetch(url, { headers: { Accept: 'application/json' }, ...options });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error || `The server answered ${response.status}.`);
  return body;
}

// -- warming the model up --------------------------------------------------------------------------
// Asks the model server to load the model, then follows its state (root.dataset.state, and the status
// line while it loads) until it is ready or failed. Returns warmUp: one warm-up at a time, shared by
// every caller; after a failed request the next call tries again. ``afterWarming`` gives what the
// status line says once the model is ready, in place of the warm-up's words (a run's words while one runs).
function modelWarmUp(root, status, afterWarming) {
  let warming = null;
  let warmingWords = WARMING; // what the status line says while the model is not ready

  async function pollModel() {
    try {
      const state = await getJSON(root.dataset.apiModel);
      root.dataset.state = state.state;
      if (state.state === 'loading') {
        // A model server that stopped is being started again: its own words say so.
        warmingWords = state.restarting ? state.message : WARMING;
        setText(status, warmingWords);
        return new Promise((resolve) => setTimeout(() => resolve(pollModel()), POLL_MS));
      }
      if (state.state === 'failed') setText(status, state.message);
      else if (status.textContent === warmingWords) setText(status, afterWarming());
      return state;
    } catch (error) {
      setText(status, error.message);
      return null;
    }
  }

  return function warmUp() {
    if (!warming) {
      warming = getJSON(root.dataset.apiLoad, { method: 'POST' }).then(pollModel).catch((error) => {
        setText(status, error.message);
        warming = null;
      });
    }
    return warming;
  };
}

// -- running ---------------------------------------------------------------------------------------
// Counts the seconds of a wait since ``started`` in the progress line, twice a second, so that the reader
// sees it has not stalled; ``waitingFor`` names what is awaited at each tick (it changes if the model
// turns out to be loading). Returns the interval, for clearInterval when the wait ends.
function countSeconds(progressText, started, waitingFor) {
  const show = () => {
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    setText(progressText, `${waitingFor()} · ${seconds} s`);
  };
  const tick = setInterval(show, 500);
  show();
  return tick;
}

// POSTs the form (as ``submitter`` would) with ?fragment=1 and returns the results panel's HTML. A panel
// saying the model is still loading, with a data-retry-after, is waited out and the request sent again, so
// the reader's one press gets a real answer; the page is marked loading meanwhile (the progress line
// then says so).
async function fetchResultsPanel(root, form, submitter) {
  for (;;) {
    const body = new URLSearchParams(new FormData(form, submitter));
    const action = new URL(form.getAttribute('action') || window.location.href, window.location.href);
    action.searchParams.set('fragment', '1');
    const response = await fetch(action, { method: 'POST', body, headers: { Accept: 'text/html' } });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    const html = await response.text();
    const panel = new DOMParser().parseFromString(html, 'text/html').querySelector('[data-ls-error]');
    const retry = Number(panel?.dataset.retryAfter || 0);
    if (panel?.dataset.state === 'loading' && retry > 0) {
      root.dataset.state = 'loading';
      await new Promise((resolve) => setTimeout(resolve, retry * 1000));
      continue;
    }
    return html;
  }
}

// Once the new panel is in: its problems go beside their fields, the status line says the verdict (and
// the caution's headline, if any), and the focus moves to the first invalid field, or else to the
// results (without scrolling the page when their top is already on the screen).
function reportAnswer(root, results, status) {
  const invalidField = placeProblems(root, results);
  const verdict = results.querySelector('[data-ls-verdict]');
  const said = verdict ? `Scored. ${verdict.textContent.replace(/\s+/g, ' ').trim()}.` : 'The question was not scored.';
  const caution = results.querySelector('[data-ls-caution-headline]');
  setText(status, caution ? `${said} ${caution.textContent}` : said);
  (invalidField || results).focus({ preventScroll: !invalidField && isVisible(results) });
}

// A run that got no panel (the network or the server failed) says so as an alert in the results' place.
function reportFailure(results, error) {
  results.replaceChildren();
  const box = document.createElement('div');
  box.className = 'ls-error';
  box.setAttribute('role', 'alert');
  box.textContent = `The question could not be scored: ${error.message}. Check the connection and try again.`;
  results.append(box);
}

// The parts are found in ``root`` by their data attributes: [data-ls-form] (or ``form``),
// [data-ls-results], [data-ls-status], [data-ls-progress], [data-ls-progress-text], [data-ls-run];
// ``root.dataset.apiModel`` / ``apiLoad`` are the model's state and warm-up URLs. ``words`` says
// what the status line says while it runs ({ running, busy }) and what the progress line says the
// reader waits for ({ waiting }, before its seconds).
export function liveForm(root, { form = root.querySelector('[data-ls-form]'), words } = {}) {
  const results = root.querySelector('[data-ls-results]');
  const status = root.querySelector('[data-ls-status]');
  const progress = root.querySelector('[data-ls-progress]');
  const progressText = root.querySelector('[data-ls-progress-text]');
  const runButton = form.querySelector('[data-ls-run]');
  let running = false;

  // A field the reader changes is no longer marked: the next run checks it again.
  root.addEventListener('input', (event) => { if (event.target.id) clearProblem(root, event.target); });

  const warmUp = modelWarmUp(root, status, () => (running ? words.running : ''));
  form.addEventListener('focusin', warmUp, { once: true });

  function busy(on) {
    running = on;
    runButton.setAttribute('aria-disabled', on ? 'true' : 'false');
    results.setAttribute('aria-busy', on ? 'true' : 'false');
    progress.hidden = !on;
  }

  async function run(submitter) {
    const started = performance.now();
    busy(true);
    setText(status, words.running);
    const tick = countSeconds(progressText, started,
      () => (root.dataset.state === 'loading' ? WARMING_SHORT : words.waiting || WAITING));
    bringIntoView(progress);
    warmUp();
    try {
      results.innerHTML = await fetchResultsPanel(root, form, submitter); // our own server's escaped template output
      reportAnswer(root, results, status);
    } catch (error) {
      reportFailure(results, error);
    } finally {
      clearInterval(tick);
      busy(false);
    }
  }

  form.addEventListener('submit', (event) => {
    // Only the run button scores; another submit button of the form (if any) is the page's own.
    if (event.submitter && event.submitter !== runButton) return;
    event.preventDefault();
    if (running) {
      setText(status, words.busy);
      return;
    }
    run(event.submitter);
  });

  return {
    showProblem: (control, said) => showProblem(root, control, said),
    clearProblem: (field) => clearProblem(root, field),
    warmUp,
    status,
  };
}

// -- problems beside their fields ------------------------------------------------------------------
// A problem's message goes in the field's [data-field-error] element (templates/_form_errors.html).
export function showProblem(root, control, said) {
  const field = root.querySelector(`#${control}`);
  const message = root.querySelector(`[data-field-error="${control}"]`);
  if (!field || !message) return null;
  field.setAttribute('aria-invalid', 'true');
  message.textContent = said;
  message.hidden = false;
  return field;
}

export function clearProblem(root, field) {
  const message = root.querySelector(`[data-field-error="${field.id}"]`);
  field.removeAttribute('aria-invalid');
  if (message) {
    message.textContent = '';
    message.hidden = true;
  }
}

// The problems a server's answer lists by field (data-problem-for, in ``from``), placed on the fields
// of ``root`` (the marks of an earlier answer cleared first); returns the first such field, which
// should take the focus, or null.
export function placeProblems(root, from) {
  root.querySelectorAll('[aria-invalid="true"]').forEach((field) => clearProblem(root, field));
  const fields = [...from.querySelectorAll('[data-problem-for]')]
    .map((item) => showProblem(root, item.dataset.problemFor, item.textContent.trim()))
    .filter(Boolean);
  return fields[0] || null;
}

// Whether the top of ``el`` is on the screen (then focusing it must not scroll the page).
function isVisible(el) {
  const top = el.getBoundingClientRect().top;
  return top >= 0 && top < window.innerHeight;
}

// Brings ``el`` on the screen when it is not, or sits at its bottom edge, with room below it for what
// follows (it ends two thirds down); once, when a wait begins: a reader who scrolls away afterwards
// is not followed.
export function bringIntoView(el) {
  const box = el.getBoundingClientRect();
  const room = window.innerHeight / 3;
  if (box.top < 0) window.scrollBy({ top: box.top - room });
  else if (box.bottom > window.innerHeight - 48) window.scrollBy({ top: box.bottom - window.innerHeight + room });
}
