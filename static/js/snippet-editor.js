// "Edit and run" for a page's Python snippet: loaded only when a reader presses the button
// (site.js), with CodeMirror 6 (served from node_modules by engine/vendor.py) and the page's
// Python worker (python-runtime.js, started now if it is not yet).
//
// The editor starts with the snippet's text exactly as the page shows it (the same text the tests
// run). Run executes it in Pyodide (widgetkit/snippets.py: each `expr  # → repr` line is evaluated
// and compared with the result the page printed); the result goes into a polite live region under
// the code. A run longer than RUN_LIMIT_MS is stopped: the worker is replaced, and the page says so.
// Ctrl+Enter (⌘+Enter) runs from inside the editor; Tab leaves it, as everywhere else on the page.
const RUN_LIMIT_MS = 10000;

// The editor in the page's colours, light and dark: the site's custom properties reach into the shadow root.
const THEME = {
  '&': { backgroundColor: 'var(--code-bg)', color: 'var(--fg)', border: '1px solid var(--rule)', borderRadius: '.4rem',
    font: '.88rem/1.5 var(--mono)' },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: 'inherit', lineHeight: 'inherit' },
  '.cm-content': { caretColor: 'var(--fg)', padding: '.6rem 0' },
  '.cm-cursor, .cm-dropCursor': { borderLeft: '2px solid var(--fg)' },
  '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--rule)',
    borderRadius: '.4rem 0 0 .4rem' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground':
    { backgroundColor: 'var(--highlight)' },
  '.cm-matchingBracket': { backgroundColor: 'var(--panel-strong)', outline: '1px solid var(--muted)' },
  '.tok-keyword, .tok-operatorKeyword, .tok-controlKeyword': { color: 'var(--accent)', fontWeight: '600' },
  '.tok-string, .tok-number, .tok-bool, .tok-atom': { color: 'var(--result)' },
  '.tok-comment': { color: 'var(--comment)', fontStyle: 'italic' },
};

let modules = null;
let counter = 0;

function loadModules() {
  if (!modules) {
    if (!document.querySelector('link[data-snippet-editor]')) {
      const css = document.createElement('link');
      css.rel = 'stylesheet';
      css.href = new URL('../css/snippet-editor.css', import.meta.url).href;
      css.dataset.snippetEditor = '';
      document.head.append(css);
    }
    modules = Promise.all([
      import(new URL('../../vendor/editor.js', import.meta.url).href),
      import('./python-runtime.js'),
    ]);
    modules.catch(() => { modules = null; }); // a failed load can be tried again
  }
  return modules;
}

function make(tag, attributes = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'class') el.className = value;
    else el.setAttribute(name, value);
  }
  el.append(...children);
  return el;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// The result of a run, as elements for the live region: a verdict first, then each stated result.
function describe(ran) {
  const parts = [];
  const differing = ran.results.filter((r, i) => ran.page[i]?.shown !== r.actual).length
    + Math.max(0, ran.page.length - ran.results.length);
  let verdict;
  if (ran.error) {
    verdict = make('p', { class: 'snippet-verdict snippet-error' },
      make('strong', {}, 'Python error'), ran.error.line ? ` on line ${ran.error.line}: ` : ': ',
      make('code', {}, ran.error.message));
  } else if (ran.same) {
    verdict = make('p', { class: 'snippet-verdict snippet-same' }, 'Same as the page: ',
      plural(ran.results.length, 'result'), ' as printed above.');
  } else {
    verdict = make('p', { class: 'snippet-verdict snippet-changed' }, 'You changed the inputs: ',
      `${plural(differing, 'result')} differ${differing === 1 ? 's' : ''} from the page.`);
  }
  parts.push(verdict);
  if (ran.results.length) {
    const list = make('ul', { class: 'snippet-results' });
    ran.results.forEach((result, i) => {
      const page = ran.page[i];
      const same = page?.shown === result.actual;
      list.append(make('li', { class: same ? 'is-same' : 'is-changed' },
        `Line ${result.line}: `, make('code', {}, result.expression), ' → ', make('code', { class: 'snippet-value' }, result.actual),
        make('span', { class: 'snippet-page' }, same ? ' (same as the page)' : page ? ' (the page: ' : ' (not on the page)',
          ...(same || !page ? [] : [make('code', {}, page.shown), ')']))));
    });
    parts.push(list);
  }
  if (ran.output) {
    parts.push(make('p', { class: 'snippet-printed-label' }, 'Printed:'),
      make('pre', { class: 'snippet-printed', tabindex: '0' }, ran.output));
  }
  return parts;
}

// The editor's host, Run, Reset and the live region for results, put just after the page's <pre>,
// which is hidden (not removed) while the editor stands in for it.
function placeControls(snippet, pre, id) {
  const host = make('div', { class: 'snippet-editor', id });
  const run = make('button', { type: 'button', class: 'snippet-run' }, 'Run');
  const reset = make('button', { type: 'button', class: 'snippet-reset' }, 'Reset');
  const hint = make('span', { class: 'snippet-hint' }, 'Ctrl+Enter runs; Tab leaves the editor.');
  const tools = make('div', { class: 'snippet-tools' }, run, ' ', reset, ' ', hint);
  const output = make('div', { class: 'snippet-output', 'aria-live': 'polite', id: `${id}-output` });
  snippet.classList.add('is-editing');
  pre.hidden = true;
  pre.after(host, tools, output);
  return { host, run, reset, output };
}

// What a run that gave no result says: a run past the limit was stopped (its worker replaced, so the
// reader may go on); any other failure is the page's Python worker failing to start or to answer.
function runFailure(error) {
  if (error.kind === 'Timeout') {
    return make('p', { class: 'snippet-verdict snippet-error' }, make('strong', {}, 'Stopped'),
      `: the code ran longer than ${RUN_LIMIT_MS / 1000} s (a loop that never ends?). `
      + 'Python was restarted, so the page stays usable; change the code and run it again.');
  }
  return make('p', { class: 'snippet-verdict snippet-error' }, make('strong', {}, 'Python is not available'),
    `: ${error.message}`);
}

// Run, for the button and the editor's keys: one run at a time (a press while one runs is ignored),
// the button showing that it runs. ``code`` reads the editor's text when the run starts. Returns
// true, as CodeMirror's key handlers must to say the key was handled.
function snippetRunner({ explainers, button, say, code, original }) {
  let running = false;
  return async function runNow() {
    if (running) return true;
    running = true;
    button.disabled = true;
    button.textContent = 'Running…';
    // The first run also starts Python, which takes seconds: the reader is told why it waits.
    const startedPython = explainers.status !== 'ready';
    say(make('p', { class: 'snippet-verdict' }, startedPython
      ? 'Starting Python in this page (the first run takes a few seconds)…' : 'Running…'));
    try {
      const ran = await explainers.runSnippet(code(), { page: original, timeoutMs: RUN_LIMIT_MS });
      say(...describe(ran));
    } catch (error) {
      say(runFailure(error));
    } finally {
      running = false;
      button.disabled = false;
      button.textContent = 'Run';
    }
    return true;
  };
}

// The CodeMirror view on ``original``, with Python highlighting and the page's theme, in ``host``.
// In a shadow root: CodeMirror's own styles then go into a constructed style sheet, which the
// page's Content-Security-Policy (no inline <style>) allows; in a document it would add a <style>.
function createEditorView(host, editorModules, original, runNow) {
  const { state, view, commands, language, lang_python: langPython, highlight } = editorModules;
  const shadow = host.attachShadow({ mode: 'open' });
  return new view.EditorView({
    parent: shadow,
    root: shadow,
    state: state.EditorState.create({
      doc: original,
      extensions: [
        view.lineNumbers(),
        commands.history(),
        view.drawSelection(),
        language.indentOnInput(),
        language.bracketMatching(),
        language.syntaxHighlighting(highlight.classHighlighter),
        langPython.python(),
        view.EditorView.lineWrapping,
        view.EditorView.theme(THEME),
        view.keymap.of([
          { key: 'Mod-Enter', run: () => { runNow(); return true; } },
          { key: 'Shift-Enter', run: () => { runNow(); return true; } },
          ...commands.defaultKeymap,
          ...commands.historyKeymap,
        ]),
        view.EditorView.contentAttributes.of({
          'aria-label': 'Python code of this snippet, editable. Ctrl+Enter runs it; the result appears below.',
        }),
      ],
    }),
  });
}

/** Turn one `.snippet` into an editor with Run and Reset; resolves once it is ready to type in. */
export async function openEditor(snippet, { announce = () => {} } = {}) {
  const [editorModules, { explainers }] = await loadModules();
  const pre = snippet.querySelector('pre');
  const original = pre.querySelector('code').textContent;
  const id = `snippet-editor-${++counter}`;
  const { host, run, reset, output } = placeControls(snippet, pre, id);
  const say = (...nodes) => output.replaceChildren(...nodes);

  // ``editor`` is read only when a run starts, after it is made below.
  const runNow = snippetRunner({ explainers, button: run, say, code: () => editor.state.doc.toString(), original });
  const editor = createEditorView(host, editorModules, original, runNow);

  run.addEventListener('click', runNow);
  reset.addEventListener('click', () => {
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: original } });
    say(make('p', { class: 'snippet-verdict' }, 'Reset: the code is the page’s again.'));
    editor.focus();
  });
  explainers.ready.catch(() => {}); // started now; a failure is reported by Run
  editor.focus();
  announce('Editor open: edit the code, then press Run or Ctrl+Enter');
  return editor;
}
