// Calibration bars: the list of answers can grow, shrink, or be replaced by loaded pairs
// (live scoring sends its own answers with a "widget:load-pairs" event on the widget).
import { parseJsonLine } from '/static/js/widgets/jsonl.js';

// One answer row, copied from the server's own row template (so the markup exists once).
function row(widget, index, confidence, correct) {
  const template = widget.el.querySelector('template[data-role="answer-row"]');
  const holder = document.createElement('ol');
  holder.innerHTML = template.innerHTML.replaceAll('__INDEX__', String(index));
  const item = holder.firstElementChild;
  item.querySelector('input').value = String(confidence);
  item.querySelector('select').value = String(correct);
  return item;
}

function setAnswers(widget, confidences, corrects) {
  const list = widget.el.querySelector('[data-role="answers"]');
  list.replaceChildren(...confidences.map((c, i) => row(widget, i + 1, c, corrects[i])));
}

// Parse "confidence, right" lines, or the JSON lines `python -m benchmarks mmlu evaluate` writes
// (their "confidence" and "correct" fields); returns [confidences, corrects] or throws with the
// line named.
function parsePairs(text) {
  const confidences = [];
  const corrects = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    if (line.trim().startsWith('{')) {
      const row = parseJsonLine(line, i);
      if (typeof row.confidence !== 'number' || typeof row.correct !== 'boolean') {
        throw new Error(`line ${i + 1} has no numeric "confidence" and true/false "correct"`);
      }
      confidences.push(String(row.confidence));
      corrects.push(row.correct ? 1 : 0);
      return;
    }
    const parts = line.split(/[,;\s]+/).filter(Boolean);
    if (parts.length !== 2 || !/^(0|1)$/.test(parts[1]) || Number.isNaN(Number(parts[0]))) {
      throw new Error(`line ${i + 1} should look like “0.9, 1”`);
    }
    confidences.push(parts[0]);
    corrects.push(Number(parts[1]));
  });
  if (!confidences.length) throw new Error('no pairs found');
  return [confidences, corrects];
}

function loadText(widget, text) {
  try {
    const [confidences, corrects] = parsePairs(text);
    setAnswers(widget, confidences, corrects);
    widget.request();
  } catch (error) {
    widget.engine.textContent = `Could not load the pairs: ${error.message}.`;
  }
}

export function load(widget, pairs) {
  setAnswers(widget, pairs.map((p) => String(p[0])), pairs.map((p) => Number(p[1])));
  widget.request();
}

export function setup(widget) {
  const list = widget.el.querySelector('[data-role="answers"]');
  widget.el.querySelector('[data-action="add-answer"]').addEventListener('click', () => {
    const rows = list.querySelectorAll('li');
    const last = rows[rows.length - 1];
    const confidence = last ? last.querySelector('input').value : '0.5';
    list.append(row(widget, rows.length + 1, confidence, 1));
    widget.request();
  });
  widget.el.querySelector('[data-action="remove-answer"]').addEventListener('click', () => {
    const rows = list.querySelectorAll('li');
    if (rows.length > 1) rows[rows.length - 1].remove();
    widget.request();
  });
  const pasted = widget.el.querySelector('[data-role="pairs"]');
  widget.el.querySelector('[data-action="load-pairs"]').addEventListener('click', () => loadText(widget, pasted.value));
  widget.el.querySelector('[data-role="pairs-file"]').addEventListener('change', async (event) => {
    const [file] = event.target.files;
    if (!file) return;
    pasted.value = await file.text();
    loadText(widget, pasted.value);
  });
  widget.el.addEventListener('widget:load-pairs', (event) => load(widget, event.detail.pairs));
}

// After the view model has checked the answers, show the list it used (bad entries are dropped).
export function apply(widget, view) {
  const boxes = widget.el.querySelectorAll('[data-role="answers"] input');
  if (boxes.length !== view.state.conf.length) setAnswers(widget, view.state.conf, view.state.correct);
}
