// The MMLU-Pro question browser (/mmlu-pro/run). Scoring the option letters is every benchmark's live
// form (static/js/widgets/live-form.js): the result comes in place, with the status line, bars and
// verdict. This script adds the chain of thought, streamed as the model writes it: until the first
// token the page says that the model is reading the worked examples and the question (how many
// tokens, how many of them it had already read for this category, and the seconds so far), then
// that it is writing (tokens and seconds as they come), and at the end, in words, why it stopped.
// "Show this question" (and "Show a random one") shows it in place too: the same GET with ?fragment=1
// answers the shown question alone (or the problems, placed beside their fields), the address is
// updated with history.replaceState (a random question gets its number, so a reload shows it again),
// and the last question's results are cleared. Without this script both forms send the reader to the
// page, which shows the whole result when it is done.
// While it streams the reasoning button keeps the focus: it is marked aria-disabled (a disabled
// button would drop the focus to the page), and pressing it again only says the model still writes.
// The end of what is being written is kept on the screen (on a phone the panel starts below the
// fold) until the reader scrolls away; it is followed again once they bring it back on screen.
import { liveForm, placeProblems, setText } from '/static/js/widgets/live-form.js';

const root = document.querySelector('[data-ls-widget]');
// The shown question's scoring form and reasoning button: replaced with each question shown in place.
let form = root?.querySelector('[data-ls-form]');
let button = root?.querySelector('button[data-cot]');
let stopper = null;
const panel = root?.querySelector('[data-reasoning]');
const written = root?.querySelector('[data-written]');
const progress = root?.querySelector('[data-cot-progress]');
const verdict = root?.querySelector('[data-verdict]');
const stopButton = root?.querySelector('[data-cot-stop]');

const WORDS = {
  running: 'Scoring started; its answer will appear below.',
  busy: 'Still scoring this question; its answer will appear below.',
};

// Keeps ``end`` (the bottom of the panel) on the screen each time it is called, unless the reader has
// scrolled since the last call (the page is no longer where this left it) and has not brought
// ``end`` back on screen. Instant scrolls: a smooth one would still be moving at the next call.
function follower(end) {
  let leftAt = null;
  return () => {
    const box = end.getBoundingClientRect();
    const onScreen = box.bottom >= 0 && box.bottom <= window.innerHeight;
    if (leftAt !== null && Math.abs(window.scrollY - leftAt) > 1 && !onScreen) return;
    if (!onScreen) window.scrollBy({ top: box.bottom - window.innerHeight + 8, behavior: 'instant' });
    leftAt = window.scrollY;
  };
}

const number = (n) => n.toLocaleString('en');
const plural = (n, word) => `${number(n)} ${word}${n === 1 ? '' : 's'}`;

// The closing line in words: the extraction and why it stopped, or why the server cut it short.
function describe(last, tokens) {
  if (last.error) return `It wrote ${plural(tokens, 'token')} and stopped because ${last.stopped}.`;
  const read = last.extracted
    ? `Read with the rule “${last.rule}”: ${last.extracted}; the key is ${last.key}, so it is ${last.correct ? 'right' : 'wrong'}.`
    : `No letter could be read (${last.rule}); the key is ${last.key}.`;
  return `${read} It wrote ${plural(last.tokens, 'token')} and stopped because ${last.stopped}.`;
}

// What the model is doing, with the seconds since the reader pressed the button.
function progressLine(state, seconds) {
  if (state.phase === 'queued') return `Waiting for the model… ${seconds} s`;
  if (state.phase === 'reading') {
    const what = state.shots ? `the ${plural(state.shots, 'worked example')} and the question` : 'the question';
    const cached = state.cached ? `, ${number(state.cached)} of them already read for this category` : '';
    return `Reading ${what}: ${plural(state.prompt, 'token')}${cached}… ${seconds} s`;
  }
  return `Writing: ${plural(state.tokens, 'token')} in ${seconds} s`;
}

async function stream() {
  const body = {
    category: form.elements.category.value,
    index: Number(form.elements.number.value) - 1, // the page counts from 1, the API from 0
    shots: Number(form.elements.shots.value),
  };
  const started = performance.now();
  const state = { phase: 'queued', shots: 0, prompt: 0, cached: 0, tokens: 0 };
  const show = () => { progress.textContent = progressLine(state, ((performance.now() - started) / 1000).toFixed(1)); };
  const tick = setInterval(show, 250);
  stopper = new AbortController();
  let last = null;
  panel.hidden = false;
  progress.hidden = false;
  written.textContent = '';
  verdict.textContent = 'The model is reading the prompt.';
  show();
  const follow = follower(stopButton.parentElement);
  button.setAttribute('aria-disabled', 'true');
  stopButton.hidden = false;
  follow();
  const thisButton = button;
  stopButton.onclick = () => { stopper.abort(); thisButton.focus(); }; // the Stop button hides at the end
  try {
    const response = await fetch('/api/mmlu-pro/generate', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: stopper.signal,
    });
    if (!response.ok) {
      verdict.textContent = (await response.json()).error;
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      const lines = buffered.split('\n');
      buffered = lines.pop();
      for (const line of lines.filter(Boolean)) {
        const event = JSON.parse(line);
        if (event.prompt !== undefined) {
          state.shots = event.shots_used;
        } else if (event.reading) {
          Object.assign(state, { phase: 'reading', prompt: event.reading.prompt_tokens, cached: event.reading.cached_tokens });
        } else if (event.text !== undefined) {
          if (state.phase !== 'writing') {
            state.phase = 'writing';
            // The first token's time, in seconds from the press (tests/browser read it here).
            root.dataset.firstTokenS = ((performance.now() - started) / 1000).toFixed(2);
            verdict.textContent = 'The model is writing.';
          }
          state.tokens = event.tokens;
          written.textContent += event.text;
          follow();
        } else if (event.done || event.error) {
          last = event;
        }
      }
      show();
    }
    verdict.textContent = last ? describe(last, state.tokens) : 'The answer broke off before its end; try again.';
  } catch (error) {
    verdict.textContent = stopper?.signal.aborted
      ? `It wrote ${plural(state.tokens, 'token')} and stopped because you stopped it; no letter was read.`
      : `The stream broke off: ${error.message}`;
  } finally {
    clearInterval(tick);
    show();
    follow();
    stopButton.hidden = true;
    thisButton.setAttribute('aria-disabled', 'false');
  }
}

// The scoring form of the question shown: every live form's scoring, and the streamed reasoning.
function bindQuestion() {
  form = root.querySelector('[data-ls-form]');
  button = root.querySelector('button[data-cot]');
  if (!form) return;
  liveForm(root, { form, words: WORDS });
  if (button && panel && window.TextDecoderStream) {
    button.addEventListener('click', (event) => {
      event.preventDefault();
      if (button.getAttribute('aria-disabled') === 'true') {
        verdict.textContent = 'The model is still writing; its answer will follow the text.';
        return;
      }
      stream();
    });
  }
}

// -- "Show this question", in place --------------------------------------------------------------
const questionForm = root?.querySelector('[data-question-form]');
const shown = root?.querySelector('[data-shown-question]');
const shownStatus = root?.querySelector('[data-shown-status]');
let latestShow = 0; // an answer that arrives after a newer request is dropped

async function showQuestion(submitter) {
  const ticket = ++latestShow;
  const address = new URL(questionForm.getAttribute('action'), window.location.href);
  address.search = new URLSearchParams(new FormData(questionForm, submitter)).toString();
  const asked = new URL(address);
  asked.searchParams.set('fragment', '1');
  setText(shownStatus, 'Fetching the question…');
  let html;
  try {
    const response = await fetch(asked, { headers: { Accept: 'text/html' } });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    html = await response.text();
  } catch (error) {
    setText(shownStatus, `The question could not be fetched: ${error.message}. Check the connection and try again.`);
    return;
  }
  if (ticket !== latestShow) return;
  stopper?.abort(); // a chain of thought still streaming belongs to the question before
  shown.innerHTML = html; // our own server's escaped template output
  const invalidField = placeProblems(root, shown);
  const section = shown.querySelector('.run-question');
  // The last question's answer and reasoning do not belong to this one.
  root.querySelector('[data-ls-results]').replaceChildren();
  panel.hidden = true;
  written.textContent = '';
  verdict.textContent = '';
  if (section) {
    const { category, number, shots } = section.dataset;
    questionForm.elements.number.value = number;
    address.searchParams.delete('random');
    address.searchParams.set('number', number); // a random question's own number, so a reload shows it
    history.replaceState(null, '', address);
    bindQuestion();
    setText(shownStatus, `Showing ${category}, question ${number}, with ${shots} worked example${shots === '1' ? '' : 's'}.`);
  } else {
    setText(shownStatus, 'The question was not shown: check the form.');
  }
  if (invalidField) invalidField.focus();
}

if (root) {
  bindQuestion();
  questionForm?.addEventListener('submit', (event) => {
    event.preventDefault();
    showQuestion(event.submitter);
  });
}
