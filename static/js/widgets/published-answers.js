// The static export's live form (templates/widgets/_published_answers.html): a standard question and
// the answer a published run gave to it, read from the files beside the document
// (engine/published_answers.py): published/index.json, then the one file of questions that holds
// the question asked. Nothing here computes an answer; it shows the run's. Every benchmark's form.
const CHANGE_WAIT_MS = 150;

function methodWords(run) {
  const shots = run.shots === 1 ? '1 example' : `${run.shots} examples`;
  return `${run.method === 'letter' ? 'letter' : 'generative'} method, ${shots}`;
}

function percent(p) {
  return `${(100 * p).toFixed(1)}%`;
}

async function getJSON(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  return response.json();
}

// The run's answer to the question, in sentences: what it said, right or wrong, and its numbers.
function answerLines(run, question) {
  const given = question.answers[run.name];
  const said = given.prediction ? `answered ${given.prediction}` : 'gave no letter that could be read';
  const lines = [`The published run ${run.name} (${methodWords(run)}; ${run.model}) ${said}: `
    + `${given.correct ? 'right' : 'wrong'}, the key is ${question.key}.`];
  if (given.probabilities) {
    lines.push(`Its probabilities for the next token: ${Object.entries(given.probabilities)
      .map(([letter, p]) => `“ ${letter}” ${percent(p)}`).join(', ')}.`);
  }
  if (given.generated !== undefined) lines.push(`It wrote: “${given.generated}”.`);
  return lines;
}

function showQuestion(el, question) {
  el.querySelector('[data-role="question-text"]').textContent = question.question;
  el.querySelector('[data-role="choices"]').replaceChildren(...question.choices.map((text) => {
    const item = document.createElement('li');
    item.textContent = text;
    return item;
  }));
  el.querySelector('[data-role="question"]').hidden = false;
}

async function start(el) {
  const indexUrl = new URL(el.dataset.publishedAnswers, document.baseURI);
  const form = el.querySelector('form');
  const subject = form.elements.subject;
  const number = form.elements.number;
  const runSelect = form.elements.run;
  const answer = el.querySelector('[data-role="answer"]');
  const index = await getJSON(indexUrl);
  // Letter runs first, then generative; fewer shots first.
  const runs = [...index.runs].sort((a, b) => (a.method === b.method ? a.shots - b.shots : a.method === 'letter' ? -1 : 1));
  // Short labels (a select is as wide as its longest option); the answer names the run in full.
  runSelect.replaceChildren(...runs.map((run) => new Option(methodWords(run), run.name)));
  el.querySelector('[data-role="no-js"]').hidden = true;
  form.hidden = false;
  const chunks = new Map();

  async function show() {
    const { questions, total } = subject.selectedOptions[0].dataset;
    const count = Number(questions);
    number.max = String(count);
    // Where the runs answered fewer than the subject has (a sample), the hint says which.
    el.querySelector('[data-role="hint"]').textContent = total
      ? `1 to ${count}: the first ${count} of its ${Number(total).toLocaleString('en')}, which the run answered`
      : `1 to ${count.toLocaleString('en')}`;
    const n = Number(number.value);
    if (!Number.isInteger(n) || n < 1 || n > count) {
      answer.textContent = `The question number is a whole number from 1 to ${count}.`;
      return;
    }
    const chunkUrl = new URL(`${encodeURIComponent(subject.value)}/${Math.floor((n - 1) / index.chunk)}.json`, indexUrl);
    if (!chunks.has(chunkUrl.href)) chunks.set(chunkUrl.href, getJSON(chunkUrl));
    const question = (await chunks.get(chunkUrl.href))[(n - 1) % index.chunk];
    const run = runs.find((r) => r.name === runSelect.value);
    showQuestion(el, question);
    answer.replaceChildren(...answerLines(run, question).map((text) => {
      const p = document.createElement('p');
      p.textContent = text;
      return p;
    }));
    el.dataset.shown = `${subject.value}/${n}/${run.name}`;
  }

  let timer;
  form.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => show().catch(failed), CHANGE_WAIT_MS); });
  function failed(error) { answer.textContent = `Could not read the published answer: ${error.message}`; }
  await show();
}

for (const el of document.querySelectorAll('[data-published-answers]')) {
  start(el).catch((error) => {
    el.querySelector('[data-role="answer"]').textContent = `Could not read the published runs: ${error.message}`;
  });
}
