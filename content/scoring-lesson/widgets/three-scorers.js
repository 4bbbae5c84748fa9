// Same question, three scorers: every live form's script (static/js/widgets/live-form.js) answers it
// in place, with the status line, the progress and the problems beside their fields; this file only
// says what the status line says while the model works, and enables the share box.
import { enableShareBox } from '/static/js/widgets/share.js';
import { liveForm } from '/static/js/widgets/live-form.js';

const WORDS = {
  running: 'Scoring started; it can take a minute, and every decision will appear below the form.',
  waiting: 'Scoring: the model reads the question six times and writes two answers',
  busy: 'Still scoring this question; every decision will appear below the form.',
};

for (const root of document.querySelectorAll('section.widget[data-widget="three-scorers"]')) {
  liveForm(root, { words: WORDS });
  enableShareBox(root);
}
