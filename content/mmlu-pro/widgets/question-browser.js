// The MMLU-Pro question browser (/mmlu-pro/run): stream the chain of thought as the model writes it.
// Without this script the same button posts the form and the page shows the whole text when it is done.
// While it streams the button keeps the focus: it is marked aria-disabled (a disabled button would
// drop the focus to the page), and pressing it again only says that the model is still writing.
const button = document.querySelector('button[data-cot]');
const panel = document.querySelector('[data-reasoning]');
const written = document.querySelector('[data-written]');
const verdict = document.querySelector('[data-verdict]');

function describe(last) {
  if (last.error) return last.error;
  const read = last.extracted
    ? `Read with the rule “${last.rule}”: ${last.extracted}; the key is ${last.key}, so it is ${last.correct ? 'right' : 'wrong'}.`
    : `No letter could be read (${last.rule}); the key is ${last.key}.`;
  return `${read} It wrote ${last.tokens} tokens and stopped at ${last.reason}.`;
}

async function stream(form) {
  const body = {
    category: form.elements.category.value,
    index: Number(form.elements.number.value) - 1, // the page counts from 1, the API from 0
    shots: Number(form.elements.shots.value),
  };
  panel.hidden = false;
  written.textContent = '';
  verdict.textContent = 'The model is writing…';
  button.setAttribute('aria-disabled', 'true');
  try {
    const response = await fetch('/api/mmlu-pro/generate', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
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
        if (event.text !== undefined) written.textContent += event.text;
        else if (event.done || event.error) verdict.textContent = describe(event);
      }
    }
  } catch (error) {
    verdict.textContent = `The stream broke off: ${error.message}`;
  } finally {
    button.setAttribute('aria-disabled', 'false');
  }
}

if (button && panel && window.TextDecoderStream) {
  button.addEventListener('click', (event) => {
    event.preventDefault();
    if (button.getAttribute('aria-disabled') === 'true') {
      verdict.textContent = 'The model is still writing; its answer will follow the text.';
      return;
    }
    stream(button.form);
  });
}
