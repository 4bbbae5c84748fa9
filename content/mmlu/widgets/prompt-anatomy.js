// Prompt anatomy: the prompt text is data from the MMLU files, so on the live site each view comes from
// the server (the widget JSON route), and widget.js swaps in its highlighted prompt (a fragment of the
// view). Here: the question number's range follows the chosen subject's size.
export function apply(widget, view) {
  const question = widget.form.querySelector('[name="q"]');
  question.max = String(view.prompt.questions);
  const slider = widget.el.querySelector(`[data-pair="${question.id}"]`);
  if (slider) slider.max = String(view.prompt.questions);
}

// In a static export the worker runs the same view, on the questions fetched here from the files the
// export wrote beside the document (content/mmlu/hooks.py's static_files): the file of test questions
// that holds the one asked (the live form's, engine/published_answers.py) and the subject's worked
// examples. Each file is fetched once. The subject and number are settled as the view settles them
// (an unknown subject is the default; a number is clamped to the subject's questions).
const files = new Map();
function fetched(url) {
  if (!files.has(url.href)) {
    files.set(url.href, fetch(url).then((response) => {
      if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
      return response.json();
    }));
  }
  return files.get(url.href);
}

export async function shipped(widget, state) {
  const base = new URL(widget.el.querySelector('[data-shipped]').dataset.shipped, document.baseURI);
  const { subjects } = widget.context;
  const choice = widget.form.querySelector('[name="subject"]');
  const subject = subjects[state.subject] ? state.subject : choice.querySelector('option[selected]')?.value || choice.value;
  const count = subjects[subject].test;
  const asked = Math.round(Number(state.q));
  const q = Math.min(Math.max(Number.isFinite(asked) ? asked : 1, 1), count);
  const index = await fetched(new URL('published/index.json', base));
  const [chunk, dev] = await Promise.all([
    fetched(new URL(`published/${encodeURIComponent(subject)}/${Math.floor((q - 1) / index.chunk)}.json`, base)),
    fetched(new URL(`prompt-anatomy/${encodeURIComponent(subject)}.json`, base)),
  ]);
  return { subject, q, count, test: chunk[(q - 1) % index.chunk], dev };
}
