// Prompt anatomy: the prompt text is data from the MMLU files, so the view comes from the server
// (/api/widgets/prompt-anatomy); this redraws the highlighted parts from it.
export function setup() {}

export function apply(widget, view) {
  const pre = widget.el.querySelector('.prompt-text');
  pre.replaceChildren(...view.prompt.parts.map((part) => {
    const span = document.createElement('span');
    span.className = `part part-${part.kind}`;
    span.title = part.explain;
    // Focusable, and described by its legend entry, so keyboard and screen-reader users get the
    // same explanation the mouse gets from the title.
    span.tabIndex = 0;
    span.setAttribute('aria-describedby', `${widget.el.id}-legend-${part.kind}`);
    span.textContent = part.text;
    return span;
  }));
  const question = widget.form.querySelector('[name="q"]');
  question.max = String(view.prompt.questions);
  const slider = widget.el.querySelector(`[data-pair="${question.id}"]`);
  if (slider) slider.max = String(view.prompt.questions);
}
