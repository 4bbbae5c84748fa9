// The live forms as a reader meets them, without running the model: "Run it yourself" (/mmlu/run,
// /mmlu/widgets/live-scoring) and MMLU-Pro's question browser (/mmlu-pro/run). A mistake is said in
// the reader's words beside its field, the field is marked invalid and described by the message,
// and the first one takes the focus, with and without JavaScript; the Run button keeps the focus
// while the model works; questions are numbered from 1 here as in the prompt anatomy; every
// select's chosen label is whole at 320 and 360 px; the widget page has its h1, its Share / embed
// box and links back to the paper.
//
// The forms start warming the model up when first focused (POST /api/model/load). These tests
// never score a question, so that request is answered with the model's real state (GET /api/model)
// instead of loading it; every other request reaches the real server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, launch, BASE_URL, screenshot, watchConsole } from './lib.mjs';

const LIMIT_MS = 180_000; // each case; a hang fails its case instead of the whole file's 10 minutes
let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

async function newPage(options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, ...options });
  await context.route('**/api/model/load', async (route) => {
    await route.fulfill({ response: await route.fetch({ url: `${BASE_URL}/api/model`, method: 'GET' }) });
  });
  const page = await context.newPage();
  // A case may end while that answer is still on its way (the form warms up on focus); closing the
  // context under it would reject the handler after the case has ended, failing the whole file.
  const close = async () => {
    await context.unrouteAll({ behavior: 'ignoreErrors' });
    await context.close();
  };
  return { page, context, close, problems: watchConsole(page) };
}

// What each marked field shows and says: its message, where the message sits, its description.
function markedFields(page) {
  return page.$$eval('[aria-invalid="true"]', (fields) => fields.map((field) => {
    const described = (field.getAttribute('aria-describedby') || '').split(/\s+/)
      .map((id) => document.getElementById(id)?.textContent.trim() || '').filter(Boolean).join(' ');
    const message = document.querySelector(`[data-field-error="${field.id}"]`);
    const [box, said] = [field.getBoundingClientRect(), message.getBoundingClientRect()];
    return { id: field.id, message: message.hidden ? '' : message.textContent.trim(), described,
             gap: box.top - said.bottom, aligned: Math.abs(box.left - said.left) < 2 };
  }));
}

async function fillOwnQuestion(page) {
  await page.check('[data-ls-source][value="own"]');
  await page.fill('#ls-question', '');
  await page.fill('#ls-choice-a', 'one');
  await page.fill('#ls-choice-c', 'three');
  await page.fill('#ls-choice-d', 'four');
}

function assertMarked(fields) {
  assert.deepEqual(fields.map((f) => f.id), ['ls-question', 'ls-choice-b']);
  assert.match(fields[0].message, /^The question is empty: type your question, or choose “A real MMLU question”\.$/);
  assert.match(fields[1].message, /^Option B is empty: type an answer, or choose “A real MMLU question”\.$/);
  for (const f of fields) {
    assert.ok(f.described.includes(f.message), `${f.id} is described by its message: ${f.described}`);
    assert.ok(f.gap >= 0 && f.gap < 12 && f.aligned, `${f.id}'s message sits right above it (gap ${f.gap}px)`);
  }
}

test('with JavaScript: a mistake is shown in words beside its field, and the first one takes the focus', { timeout: LIMIT_MS }, async () => {
  const { page, close, problems } = await newPage();
  await page.goto(`${BASE_URL}/mmlu/run`);
  await fillOwnQuestion(page);
  await page.click('[data-ls-run]');
  await page.waitForSelector('[data-ls-error]');
  assertMarked(await markedFields(page));
  assert.equal(await page.evaluate(() => document.activeElement.id), 'ls-question');
  const shown = await page.locator('[data-ls-widget]').innerText();
  assert.ok(!/choices\[|index must|shots must/.test(shown), 'the reader never sees the API names');
  assert.match(await page.locator('[data-ls-error]').innerText(), /Option B is empty/);
  assert.deepEqual(await axeViolations(page), []);
  await page.locator('#ls-question').scrollIntoViewIfNeeded();
  await screenshot(page, 'live-form-error-1280');

  // The summary links to the field; mending a field takes its mark away.
  await page.click('[data-problem-for="ls-choice-b"] a');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'ls-choice-b');
  await page.keyboard.type('two');
  assert.deepEqual((await markedFields(page)).map((f) => f.id), ['ls-question']);
  assert.equal(await page.isHidden('#ls-choice-b-error'), true);
  assert.deepEqual(problems, []);
  await close();
});

test('without JavaScript: the same words beside the same fields, and the first one has the focus', { timeout: LIMIT_MS }, async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context, close } = await newPage({ viewport: { width: 360, height: 900 }, colorScheme });
    // The site's scripts are all files, so refusing them is a page without JavaScript; the browser's
    // own still runs, which axe-core needs (it hangs where script execution is switched off).
    await context.route(/\.m?js(\?|$)/, (route) => route.abort());
    await page.goto(`${BASE_URL}/mmlu/run`);
    await fillOwnQuestion(page);
    await Promise.all([page.waitForNavigation(), page.click('[data-ls-run]')]);
    assertMarked(await markedFields(page));
    assert.equal(await page.evaluate(() => document.activeElement.id), 'ls-question', 'autofocus on the first');
    assert.match(await page.locator('[data-ls-error]').innerText(), /The question is empty[\s\S]*Option B is empty/);
    assert.deepEqual(await axeViolations(page), [], `axe, ${colorScheme}`);
    await screenshot(page, `live-form-error-360-${colorScheme}`);
    await close();
  }
});

test('the Run button keeps the focus and says it is busy while the model works', { timeout: LIMIT_MS }, async () => {
  const { page, close, problems } = await newPage();
  // The server's real answer, held back until the test has seen the busy state, as a slow model would.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/mmlu/run?fragment=1', async (route) => {
    const response = await route.fetch();
    await held;
    await route.fulfill({ response });
  });
  await page.goto(`${BASE_URL}/mmlu/run`);
  await fillOwnQuestion(page);
  await page.focus('[data-ls-run]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-ls-progress]:not([hidden])');
  const during = await page.evaluate(() => ({
    focus: document.activeElement.dataset.lsRun !== undefined,
    disabled: document.querySelector('[data-ls-run]').getAttribute('aria-disabled'),
    status: document.querySelector('[data-ls-status]').textContent,
  }));
  assert.deepEqual(during, { focus: true, disabled: 'true',
    status: 'Scoring started; its answer will appear below the form.' });
  // The wait says what it waits for and counts its seconds (issue 40).
  assert.match(await page.textContent('[data-ls-progress-text]'), /^Scoring: the model is reading the prompt · \d+ s$/);
  await page.waitForFunction(() => /· [1-9]\d* s$/.test(document.querySelector('[data-ls-progress-text]').textContent));
  await page.keyboard.press('Enter'); // a second press only says it is still running
  assert.match(await page.textContent('[data-ls-status]'), /^Still scoring the question before/);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.lsRun !== undefined), true);
  release();
  await page.waitForSelector('[data-ls-error]');
  assert.equal(await page.getAttribute('[data-ls-run]', 'aria-disabled'), 'false');
  assert.equal(await page.textContent('[data-ls-status]'), 'The question was not scored.');
  assert.deepEqual(problems, []);
  await close();
});

// Issue 40: on a phone the scoring button may sit at the bottom edge; the wait's line (what it waits
// for, and the seconds) is brought on screen. MMLU-Pro's question says where it came from in words
// and shows its key only when asked. The scoring request is held, as a slow model would hold it, then
// dropped (these tests never run the model): the form says the question could not be scored.
test('MMLU-Pro on a phone: the wait is on screen with its seconds; the key only when asked', { timeout: LIMIT_MS }, async () => {
  for (const [width, height, scheme] of [[360, 780, 'light'], [1280, 800, 'dark']]) {
    const { page, close, problems } = await newPage({ viewport: { width, height }, colorScheme: scheme,
      hasTouch: width < 400, isMobile: width < 400 });
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    await page.route(/\/mmlu-pro\/run\?.*fragment=1/, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      await held;
      return route.abort();
    });
    await page.goto(`${BASE_URL}/mmlu-pro/run?category=math&number=1&shots=0`);
    assert.equal(await page.textContent('#run-question-title'), 'math, question 1');
    assert.match(await page.textContent('.run-origin'), /^Taken from (MMLU|the STEM website|TheoremQA|SciBench)(, [a-z ]+)?$/);
    const key = page.locator('[data-key]');
    assert.equal(await key.isVisible(), false, 'the key is folded away');
    assert.doesNotMatch(await page.locator('.run-options').innerText(), /the key/);
    await page.click('.run-key-fold > summary');
    assert.match(await key.innerText(), /^The key is [A-J]: ./);
    await page.click('.run-key-fold > summary');

    // The button at the bottom edge of the screen, as a reader who scrolled to it finds it, and pressed
    // there (from the keyboard: a click would first scroll the button into the middle).
    const edge = await page.evaluate(() => {
      const button = document.querySelector('[data-ls-run]');
      window.scrollTo({ top: window.scrollY + button.getBoundingClientRect().bottom - window.innerHeight + 2, behavior: 'instant' });
      button.focus({ preventScroll: true });
      const progress = button.closest('.ls-actions').getBoundingClientRect();
      return progress.bottom - window.innerHeight;
    });
    assert.ok(edge > 0, `the progress line's row ends below the screen before the press (${edge} px)`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-ls-progress]:not([hidden])');
    // On screen, clear of the bottom edge (a smooth scroll may take a moment).
    await page.waitForFunction(() => {
      const box = document.querySelector('[data-ls-progress]').getBoundingClientRect();
      return box.top >= 0 && box.bottom <= window.innerHeight - 48;
    }, null, { timeout: 5000 });
    assert.match(await page.textContent('[data-ls-progress-text]'), /^(Scoring: the model is reading the prompt|Warming up: the model is loading) · \d+ s$/);
    await screenshot(page, `mmlu-pro-wait-${width}-${scheme}`);
    release();
    await page.waitForSelector('[data-ls-results] .ls-error[role="alert"]');
    assert.equal(await page.locator('[data-ls-progress]').isHidden(), true);
    assert.deepEqual(problems.filter((text) => !/^Failed to load resource/.test(text)), [], 'only the dropped request');
    await close();
  }
});

test('questions are numbered from 1, as in the prompt anatomy, and a number past the end is said beside the field', { timeout: LIMIT_MS }, async () => {
  const { page, close, problems } = await newPage();
  await page.goto(`${BASE_URL}/mmlu/widgets/prompt-anatomy?subject=astronomy&q=3`);
  const anatomy = await page.textContent('.prompt-text');
  await page.goto(`${BASE_URL}/mmlu/run`);
  assert.equal(await page.inputValue('#ls-number'), '1');
  assert.equal(await page.textContent('[data-ls-number-hint]'), '1 to 152');
  await page.fill('#ls-number', '3');
  await page.dispatchEvent('#ls-number', 'change');
  await page.waitForFunction(() => document.querySelector('[data-ls-preview]').textContent.includes('Why is the sky blue?'));
  assert.ok(anatomy.includes('Why is the sky blue?'), 'question 3 is the same question in the prompt anatomy');

  await page.fill('#ls-number', '153');
  await page.dispatchEvent('#ls-number', 'change');
  await page.waitForSelector('#ls-number[aria-invalid="true"]');
  assert.equal(await page.textContent('#ls-number-error'),
    'Type a question number from 1 to 152: astronomy has 152 questions in its test split.');
  await page.click('[data-ls-random]');
  await page.waitForFunction(() => !document.querySelector('#ls-number').hasAttribute('aria-invalid'));
  const picked = Number(await page.inputValue('#ls-number'));
  assert.ok(picked >= 1 && picked <= 152, `a random question has a number from 1 to 152: ${picked}`);

  assert.deepEqual(problems, []);

  // MMLU-Pro's question browser counts the same way, and says so beside a wrong number, in place.
  await page.goto(`${BASE_URL}/mmlu-pro/run?category=history&number=88&shots=0`);
  assert.match(await page.textContent('#run-question-title'), /^history, question 88$/);
  assert.match(await page.textContent('.run-question-text'), /first pharaohs/);
  await page.fill('#run-number', '0');
  await page.click('text=Show this question');
  await page.waitForSelector('#run-number-error:not([hidden])');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'run-number');
  assert.equal(await page.textContent('#run-number-error'), 'Type a question number from 1 to 381: history has 381 test questions.');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'mmlu-pro-form-error-1280');
  await close();
});

test('your own question says which subject it is filed under, and follows the subject', { timeout: LIMIT_MS }, async () => {
  const { page, close } = await newPage();
  await page.goto(`${BASE_URL}/mmlu/run`);
  await page.check('[data-ls-source][value="own"]');
  assert.match(await page.innerText('#ls-filed'), /^Filed under astronomy, the subject chosen above\. .*about astronomy\.”/s);
  await page.selectOption('#ls-subject', 'college_medicine');
  assert.match(await page.innerText('#ls-filed'), /^Filed under college medicine, .*about college medicine\.”/s);
  await close();
});

test('the widget page has its h1, a Share / embed box and links back to the paper', { timeout: LIMIT_MS }, async () => {
  const { page, close, problems } = await newPage();
  await page.goto(`${BASE_URL}/mmlu/widgets/live-scoring`);
  assert.deepEqual(await page.$$eval('h1', (hs) => hs.map((h) => h.textContent)), ['Run it yourself: a real model answers MMLU']);
  await page.click('.widget-share summary');
  assert.match(await page.inputValue('[data-share="page"]'), /\/mmlu\/widgets\/live-scoring$/);
  assert.match(await page.inputValue('[data-share="iframe"]'), /<iframe src="[^"]*\/embed\/mmlu\/live-scoring"/);
  assert.equal(await page.isVisible('button[data-copy="w-live-scoring-link"]'), true, 'the Copy button is shown');
  await page.click('button[data-copy="w-live-scoring-link"]');
  // The clipboard answers asynchronously: wait for the box to say what happened.
  await page.waitForFunction(() => document.querySelector('.share-status').textContent !== '');
  assert.match(await page.textContent('.share-status'), /Copied|Selected/);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'live-scoring-widget-page-1280');
  await page.click('a[href$="#setup"]');
  await page.waitForURL(/\/mmlu\/#setup$/);
  assert.match(await page.textContent('#setup h2'), /how a letter is chosen/i);
  assert.deepEqual(problems, []);
  await close();
});

test('every select shows each of its labels whole at 320 and 360 px', { timeout: LIMIT_MS }, async () => {
  for (const width of [320, 360]) {
    const { page, close } = await newPage({ viewport: { width, height: 900 } });
    // The live forms, and the widgets whose selects offer the live model's published runs.
    for (const url of ['/mmlu/run', '/mmlu/widgets/live-scoring', '/embed/mmlu/live-scoring', '/mmlu-pro/run',
      '/mmlu/widgets/calibration-bars', '/mmlu/widgets/group-bars', '/mmlu/widgets/subject-bars',
      '/mmlu/widgets/release-gate', '/scoring-lesson/widgets/micro-macro', '/mmlu-pro/widgets/category-bars']) {
      await page.goto(`${BASE_URL}${url}`);
      const cut = await measureSelects(page);
      const own = page.locator('[data-ls-source][value="own"]');
      if (await own.count()) { // the own question's select shows only once it is chosen
        await own.check();
        cut.push(...await measureSelects(page));
      }
      assert.deepEqual(cut, [], `${url} at ${width} px`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${url} at ${width} px is ${overflow}px too wide`);
    }
    await close();
  }
});

// Every visible select's options, each measured as Chromium lays it out alone in a copy of its
// select: the options that would not show whole as the chosen label.
function measureSelects(page) {
  return page.$$eval('select', (selects) => selects.filter((select) => select.getClientRects().length)
    .flatMap((select) => {
      const probe = select.cloneNode(false);
      probe.removeAttribute('id');
      probe.removeAttribute('name');
      probe.style.cssText = 'position: absolute; visibility: hidden; width: auto; max-width: none; min-width: 0';
      select.parentElement.append(probe);
      const width = select.getBoundingClientRect().width;
      const cutOff = [...select.options].map((option) => {
        probe.replaceChildren(new Option(option.text));
        return { label: option.text, needs: probe.getBoundingClientRect().width, has: width };
      }).filter((o) => o.needs > o.has + 0.5).map((o) => `${select.id}: “${o.label}” needs ${o.needs}px, has ${o.has}px`);
      probe.remove();
      return cutOff;
    }));
}
