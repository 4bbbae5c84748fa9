// Prompt anatomy: the prompt text is data from the MMLU files, so each view comes from the server
// (the widget JSON route), and widget.js swaps in its highlighted prompt (a server-rendered fragment).
// Here: the question number's range follows the chosen subject's size.
export function apply(widget, view) {
  const question = widget.form.querySelector('[name="q"]');
  question.max = String(view.prompt.questions);
  const slider = widget.el.querySelector(`[data-pair="${question.id}"]`);
  if (slider) slider.max = String(view.prompt.questions);
}
