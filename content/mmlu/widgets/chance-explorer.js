// Chance explorer: choosing a subject sets the number of questions from the data; moving the
// number of questions by hand lets go of the subject.

export function onInput(widget, target) {
  if (target.id === 'w-chance-explorer-n' || target.id === 'w-chance-explorer-n-range') {
    widget.form.querySelector('[name="subject"]').value = '';
  }
}
