// A widget's SCORM 1.2 package (engine/packages.py) reporting to the learning platform it runs in.
//
// The LMS's API is the object `API` on a window above this one (SCORM 1.2's run-time: the
// launching frame or its opener, searched as the standard says). Found, this starts the session
// (LMSInitialize), marks the lesson "completed" once the learner has changed the widget and it has
// drawn the change (a score is not reported: no widget here has one), and ends the session
// (LMSFinish) when the page goes away. Not found, the widget simply works on its own.
const MAX_PARENTS = 500;

function findApi(start) {
  for (let win = start, tries = 0; win && tries < MAX_PARENTS; tries += 1) {
    try {
      if (win.API) return win.API;
    } catch (error) { return null; } // another origin's window: no API reachable
    if (win.parent === win) break;
    win = win.parent;
  }
  return null;
}

const api = findApi(window) || (window.opener && findApi(window.opener));
if (api && String(api.LMSInitialize('')) === 'true') {
  let changed = false;
  let completed = false;
  document.addEventListener('input', (event) => { if (event.target.closest('section.widget form')) changed = true; });
  document.addEventListener('change', (event) => { if (event.target.closest('section.widget form')) changed = true; });
  document.addEventListener('widget:rendered', () => {
    if (!changed || completed) return;
    completed = true;
    api.LMSSetValue('cmi.core.lesson_status', 'completed');
    api.LMSCommit('');
  }, true);
  let finished = false;
  window.addEventListener('pagehide', () => {
    if (finished) return;
    finished = true;
    api.LMSFinish('');
  });
}
