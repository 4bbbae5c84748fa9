// Handles: the marks in a figure that set a widget's main quantity (widgetkit.scene.handle,
// static/js/widgets/draggable-mark.js). Each is dragged with the mouse, dragged with a finger
// (touch events through the DevTools protocol, so the browser's own touch handling and the
// handle's touch-action are in play) and keyed, and what a reader reads (the summary, the
// verdict, the handle's announced value) must change as it should; the handle in use keeps its
// focus across redraws and shows a focus ring; axe-core finds nothing. Pyodide is kept from
// loading, so the server computes each view (as it does for every reader until the worker is
// ready). Each handle shows it can be dragged: a knob (a slider's thumb), and on the first view a
// hint naming what to drag beside the main handle's knob, gone once a handle is used (and on the next
// visit). Screenshots with a handle focused, 360 and 1280 px, light and dark, in tests/artifacts/;
// the category bars also in forced colours, and with the hint at 360 px, dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, launch, BASE_URL, screenshot, summaryText } from './lib.mjs';
import { redrawnForWidth, settle, tabTo, widgetOf } from './widget-helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser.close(); });

async function open(path, name, width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, hasTouch: true });
  await context.route(/\/pyodide\//, (route) => route.abort());
  const page = await context.newPage();
  const problems = []; // script errors (the console carries the expected refusal of Pyodide's files)
  page.on('pageerror', (err) => problems.push(String(err)));
  await page.goto(`${BASE_URL}${path}`);
  await page.waitForSelector(`section.widget[data-widget="${name}"][data-ready="true"]`, { timeout: 60_000 });
  await redrawnForWidth(page, name);
  return { page, context, problems };
}

const handleOf = (page, name, mark) => widgetOf(page, name).locator(`svg[data-role="figure"] [role="slider"][data-mark="${mark}"]`);
const summaryOf = (page, name) => widgetOf(page, name).locator('.widget-summary').evaluate(summaryText);
const renders = (page, name) => widgetOf(page, name).getAttribute('data-renders').then(Number);

// The middle of a handle's grip, in the page's pixels.
async function gripCentre(page, name, mark) {
  const box = await handleOf(page, name, mark).locator('.fig-grip').boundingBox();
  assert.ok(box.width >= 24 && box.height >= 24, `${name} ${mark}: the grip is ${box.width}×${box.height} px, under 24`);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

async function mouseDrag(page, name, mark, dx, dy) {
  const before = await renders(page, name);
  const { x, y } = await gripCentre(page, name, mark);
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let i = 1; i <= 8; i += 1) await page.mouse.move(x + (dx * i) / 8, y + (dy * i) / 8);
  await page.mouse.up();
  await settle(page, name, before);
}

async function touchDrag(page, name, mark, dx, dy) {
  const before = await renders(page, name);
  const { x, y } = await gripCentre(page, name, mark);
  const cdp = await page.context().newCDPSession(page);
  const scrolled = await page.evaluate(() => window.scrollY);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  for (let i = 1; i <= 8; i += 1) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: x + (dx * i) / 8, y: y + (dy * i) / 8 }] });
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await settle(page, name, before);
  assert.equal(await page.evaluate(() => window.scrollY), scrolled, `${name} ${mark}: the page scrolled under the finger`);
}

// Tab to the handle (keyboard only), press keys, wait for the redraw; the handle keeps its focus.
async function keys(page, name, mark, ...pressed) {
  const selector = `section.widget[data-widget="${name}"] svg[data-role="figure"] [role="slider"][data-mark="${mark}"]`;
  const onIt = await page.evaluate((sel) => document.activeElement.matches(sel), selector);
  if (!onIt) await page.focus(`section.widget[data-widget="${name}"] form.widget-controls [name]:not([type="hidden"])`);
  await tabTo(page, selector); // from the form's first control, forward by Tab to the figure
  const before = await renders(page, name);
  for (const key of pressed) await page.keyboard.press(key);
  await settle(page, name, before);
  await page.waitForFunction(() => !document.querySelector('[aria-busy]'));
  assert.ok(await page.evaluate((sel) => document.activeElement.matches(sel), selector), `${name} ${mark}: focus left the handle`);
  const ring = await page.evaluate((sel) => getComputedStyle(document.querySelector(`${sel} .fig-grip`)).stroke, selector);
  assert.notEqual(ring, 'none', `${name} ${mark}: no focus ring`);
}

// What says a handle can be dragged: every handle's knob is drawn (at least 14 px across, a rim
// and a face of different colours), and a hint (the main handle's data-hint) points at its knob
// from just above or below it. Returns the hint's words.
async function affordance(page, name) {
  const widget = widgetOf(page, name);
  const handles = widget.locator('svg[data-role="figure"] [role="slider"]');
  const knobs = await handles.locator('.fig-knob').evaluateAll((nodes) => nodes.map((node) => {
    const box = node.getBoundingClientRect();
    const face = getComputedStyle(node.querySelector('.fig-knob-face'));
    return { width: box.width, height: box.height, fill: face.fill, stroke: face.stroke };
  }));
  assert.equal(knobs.length, await handles.count(), `${name}: a handle without a knob`);
  for (const knob of knobs) {
    assert.ok(knob.width >= 14 && knob.height >= 14, `${name}: a knob ${knob.width}×${knob.height} px`);
    assert.ok(knob.stroke !== 'none' && knob.fill !== knob.stroke, `${name}: the knob's rim is not seen (${knob.fill}, ${knob.stroke})`);
  }
  const hinted = handles.and(page.locator('[data-hint]')).first();
  const words = await hinted.getAttribute('data-hint');
  const hint = widget.locator('.handle-hint');
  assert.ok(await hint.isVisible(), `${name}: no hint on the first view`);
  assert.equal(await hint.textContent(), words);
  const knob = await hinted.locator('.fig-knob').boundingBox();
  const box = await hint.boundingBox();
  const middle = knob.x + knob.width / 2;
  assert.ok(box.x <= middle && middle <= box.x + box.width, `${name}: the hint is not over its knob`);
  const gap = Math.min(Math.abs(knob.y - (box.y + box.height)), Math.abs(box.y - (knob.y + knob.height)));
  assert.ok(gap <= 12, `${name}: the hint is ${gap} px from its knob`);
  return words;
}

const hintGone = async (page, name) => assert.equal(await widgetOf(page, name).locator('.handle-hint').count(), 0,
  `${name}: the hint stayed after a handle was used`);

async function valueText(page, name, mark) {
  return handleOf(page, name, mark).getAttribute('aria-valuetext');
}

// Screenshots with the handle focused by keyboard: 1280 and 360 px, light and dark.
async function shots(page, name, mark) {
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 });
    await redrawnForWidth(page, name);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      const selector = `section.widget[data-widget="${name}"] svg[data-role="figure"] [role="slider"][data-mark="${mark}"]`;
      await page.focus(selector);
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab'); // focused by keyboard: :focus-visible
      await page.locator(selector).scrollIntoViewIfNeeded();
      await page.evaluate(() => window.scrollBy(0, -120));
      await screenshot(page, `handles-${name}-${width}-${scheme}`);
    }
  }
}

async function finish(opened, name, mark) {
  const { page, context, problems } = opened;
  assert.deepEqual(await axeViolations(page), [], `${name}: axe-core violations`);
  await shots(page, name, mark);
  assert.deepEqual(await axeViolations(page), [], `${name}: axe-core violations, dark, 360 px`);
  assert.deepEqual(problems, [], `${name}: page errors`);
  await context.close();
}

test('handles', { concurrency: 1 }, async (t) => {
  await t.test('chance explorer: the score dot and the band edge (questions)', async () => {
    const name = 'chance-explorer';
    const opened = await open('/mmlu/widgets/chance-explorer?n=100&score=0.30', name);
    const { page } = opened;
    assert.match(await summaryOf(page, name), /A score of 30\.0% on 100 questions/);
    assert.match(await summaryOf(page, name), /cannot be told apart from guessing/);
    assert.equal(await affordance(page, name), 'drag the dot to set the score');

    // Drag the score to the right: well above chance on 100 questions.
    await mouseDrag(page, name, 'score', 150, 0);
    await hintGone(page, name);
    const score = Number(await page.inputValue('#w-chance-explorer-score')); // the box is in percent
    assert.ok(score > 40, `the score went to ${score}%`);
    assert.match(await summaryOf(page, name), /can be told apart from guessing/);
    assert.doesNotMatch(await summaryOf(page, name), /cannot/);
    assert.equal(await valueText(page, name, 'score'), `${score.toFixed(1)}%`);
    assert.match(page.url(), new RegExp(`score=${score / 100}(&|$)`)); // the address keeps the share

    // The keyboard on the same mark: Home is 0 %, then two steps of 0.5 points.
    await keys(page, name, 'score', 'Home', 'ArrowRight', 'ArrowRight');
    assert.equal(await page.inputValue('#w-chance-explorer-score'), '1');
    assert.match(await summaryOf(page, name), /A score of 1\.0% on 100 questions/);
    assert.equal(await valueText(page, name, 'score'), '1.0%');
    await keys(page, name, 'score', 'PageUp', 'PageUp', 'PageUp', 'PageUp', 'PageUp', 'PageUp');
    assert.match(await summaryOf(page, name), /A score of 31\.0% on 100 questions/);

    // The band's upper edge, pulled in with a finger: the band of more questions.
    await touchDrag(page, name, 'n', -30, 0);
    const more = Number(await page.inputValue('#w-chance-explorer-n'));
    assert.ok(more > 100, `pulling the band in gave ${more} questions`);
    assert.match(await summaryOf(page, name), new RegExp(`on ${more.toLocaleString('en-US')} questions`));
    assert.equal(await valueText(page, name, 'n'), `${more.toLocaleString('en-US')} questions`);
    // ... and with the mouse, pushed out: fewer.
    await mouseDrag(page, name, 'n', 60, 0);
    const fewer = Number(await page.inputValue('#w-chance-explorer-n'));
    assert.ok(fewer < more, `pushing the band out gave ${fewer} questions (from ${more})`);
    // Keys step the count along its log scale, as the form's slider does: 100 → 1,000 is 20 steps.
    await keys(page, name, 'n', 'Home');
    assert.equal(await page.inputValue('#w-chance-explorer-n'), '1');
    await keys(page, name, 'n', 'End');
    assert.match(await summaryOf(page, name), /on 20,000 questions/);
    await finish(opened, name, 'score');
  });

  await t.test('guessing floor: the expected scores set the share known', async () => {
    const name = 'guessing-floor';
    const opened = await open('/mmlu-pro/widgets/guessing-floor', name);
    const { page } = opened;
    assert.match(await summaryOf(page, name), /knows 30% of the answers and guesses the rest expects 47\.5%/);
    await affordance(page, name);
    await mouseDrag(page, name, 'known-4', 120, 0);
    await hintGone(page, name);
    const known = Number(await page.inputValue('#w-guessing-floor-known')); // in percent
    assert.ok(known > 35, `dragging the 4-option dot right gave ${known}%`);
    assert.match(await summaryOf(page, name), new RegExp(`knows ${known}% of the answers`));
    await touchDrag(page, name, 'known-10', -200, 0);
    assert.ok(Number(await page.inputValue('#w-guessing-floor-known')) < known, 'a finger dragging the 10-option dot left lowers it');
    await keys(page, name, 'known-10', 'End');
    assert.match(await summaryOf(page, name), /knows 100% of the answers and guesses the rest expects 100\.0%/);
    await keys(page, name, 'known-4', 'Home', 'ArrowRight');
    assert.match(await summaryOf(page, name), /knows 1% of the answers/);
    assert.equal(await valueText(page, name, 'known-4'), '1% known: MMLU, 4 options expects 25.8%');
    await finish(opened, name, 'known-4');
  });

  await t.test('release gate: the band edge sets the gate width; the verdict follows', async () => {
    const name = 'release-gate';
    const opened = await open('/mmlu/widgets/release-gate?delta=-0.005', name);
    const { page } = opened;
    assert.match(await summaryOf(page, name), /^Verdict: ship\./);
    await affordance(page, name);
    // Pulled down to the narrowest gate, the same change needs a human.
    await mouseDrag(page, name, 'multiple', 0, 40);
    await hintGone(page, name);
    assert.equal(Number(await page.inputValue('#w-release-gate-multiple')), 1);
    assert.match(await summaryOf(page, name), /^Verdict: investigate\./);
    await touchDrag(page, name, 'multiple', 0, -40);
    assert.equal(Number(await page.inputValue('#w-release-gate-multiple')), 4);
    assert.match(await summaryOf(page, name), /^Verdict: ship\./);
    await keys(page, name, 'multiple', 'Home');
    assert.match(await summaryOf(page, name), /^Verdict: investigate\./);
    await keys(page, name, 'multiple', 'ArrowUp', 'ArrowUp');
    assert.equal(Number(await page.inputValue('#w-release-gate-multiple')), 2);
    assert.match(await valueText(page, name, 'multiple'), /^2 standard errors: band ± \d\.\d\d points$/);
    assert.match(await summaryOf(page, name), /^Verdict: ship\./);
    await finish(opened, name, 'multiple');
  });

  await t.test('calibration bars: a group\'s claimed bar moves its answers\' confidences', async () => {
    const name = 'calibration-bars';
    const opened = await open('/mmlu/widgets/calibration-bars', name);
    const { page } = opened;
    assert.match(await summaryOf(page, name), /average confidence 0\.65/);
    assert.match(await summaryOf(page, name), /Group 2 \(5 answers\): claimed 0\.90/);
    await affordance(page, name);
    // The surer group, dragged down 0.2 (the plot is 200 px for 0 to 100 %): its answers follow.
    await mouseDrag(page, name, 'group-2', 0, 40);
    assert.match(await summaryOf(page, name), /average confidence 0\.55/);
    assert.match(await summaryOf(page, name), /Group 2 \(5 answers\): claimed 0\.70/);
    await touchDrag(page, name, 'group-2', 0, -40);
    assert.match(await summaryOf(page, name), /Group 2 \(5 answers\): claimed 0\.90/);
    // Page Down: the less sure group's five answers each lose 0.1.
    await keys(page, name, 'group-1', 'PageDown');
    assert.match(await summaryOf(page, name), /average confidence 0\.60/);
    assert.match(await summaryOf(page, name), /Group 1 \(5 answers\): claimed 0\.30/);
    assert.equal(await valueText(page, name, 'group-1'), 'claimed 0.30, right 0.40');
    await finish(opened, name, 'group-1');
  });

  await t.test('category bars: each category at its own score; the knob on the axis moves the overall line', async () => {
    const name = 'category-bars';
    const opened = await open('/mmlu-pro/widgets/category-bars', name, 360);
    const { page } = opened;
    const widget = widgetOf(page, name);
    // At 360 px the plot has the figure's width (the names go above their rows), and each category's
    // dot stands at its own score: law's left of the overall line, math's right of it.
    const plot = () => widget.locator('svg[data-role="figure"]').evaluate((svg) => {
      const ticks = [...svg.querySelectorAll('text.fig-tick')].filter((t) => /^(0|100)%$/.test(t.textContent));
      const [zero, hundred] = ticks.map((t) => t.getBoundingClientRect());
      const dot = (category) => [...svg.querySelectorAll('g.fig-point')].find((g) => g.getAttribute('aria-label').startsWith(`${category} (`))
        .querySelector('circle.fig-dot').getBoundingClientRect();
      const centre = (box) => box.x + box.width / 2;
      return { span: centre(hundred) - centre(zero), width: svg.getBoundingClientRect().width, law: centre(dot('law')),
        math: centre(dot('math')), line: centre(svg.querySelector('.overall-score').getBoundingClientRect()),
        columns: new Set([...svg.querySelectorAll('g.fig-point circle.fig-dot')].map((c) => c.getAttribute('cx'))).size };
    });
    for (const width of [360, 1280]) {
      if (width !== 360) { await page.setViewportSize({ width, height: 900 }); await redrawnForWidth(page, name); }
      const drawn = await plot();
      assert.ok(drawn.law < drawn.line && drawn.line < drawn.math, `${width} px: law ${drawn.law}, overall ${drawn.line}, math ${drawn.math}`);
      assert.ok(drawn.columns >= 12, `${width} px: the dots stand in ${drawn.columns} columns`);
      if (width === 360) assert.ok(drawn.span >= 0.8 * drawn.width, `360 px: the plot is ${drawn.span} of ${drawn.width} px`);
      if (width === 360) { // the first view's hint, dark, in forced colours too
        await page.emulateMedia({ colorScheme: 'dark' });
        assert.equal(await affordance(page, name), 'drag to move the overall score');
        await widget.locator('figure.widget-body').scrollIntoViewIfNeeded();
        await screenshot(page, 'handles-hint-category-bars-360-dark');
        await page.emulateMedia({ colorScheme: 'dark', forcedColors: 'active' });
        await affordance(page, name);
        await screenshot(page, 'handles-hint-category-bars-360-forced-colours');
        await page.emulateMedia({ colorScheme: 'light', forcedColors: 'none' });
      }
    }
    assert.match(await summaryOf(page, name), /\nmath \(1,351 questions\): GPT-4o scored 76\.1% \(dataset card\), 95% band 73\.7% to 78\.3%, so above the overall 72\.6%/);
    assert.match(await summaryOf(page, name), /^Against an overall 72\.6%, the bands of law and engineering below it;/m);
    await mouseDrag(page, name, 'score', -200, 0);
    await hintGone(page, name);
    const score = Number(await page.inputValue('#w-category-bars-score')); // in percent
    assert.ok(score < 60, `dragging the knob left gave ${score}%`);
    assert.match(await summaryOf(page, name), new RegExp(`\\nmath \\(1,351 questions\\): GPT-4o scored 76\\.1% .*, so above the overall ${score.toFixed(1)}%`));
    await touchDrag(page, name, 'score', 100, 0);
    assert.ok(Number(await page.inputValue('#w-category-bars-score')) > score, 'a finger dragging the knob right raises it');
    await keys(page, name, 'score', 'End', 'PageDown');
    assert.match(await summaryOf(page, name), /\nmath \(1,351 questions\): GPT-4o scored 76\.1% .*, so below the overall 99\.0%/);
    assert.equal(await valueText(page, name, 'score'), '99.0%');
    // Used once, the hint is not shown again on the next visit.
    await page.reload();
    await page.waitForSelector(`section.widget[data-widget="${name}"][data-ready="true"]`);
    assert.ok(await widget.locator('[role="slider"] .fig-knob').count() > 0, 'the knob is drawn');
    await hintGone(page, name);
    await finish(opened, name, 'score');
  });
});
