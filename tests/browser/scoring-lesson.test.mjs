// The scoring lesson in headless Chromium: the page (axe, 320 px, dark); the two-run gate
// operated with the keyboard: its redraw equals the server's for the same state, and it reads
// lm-evaluation-harness sample logs (the hand-written fixture) and names a bad line; on real
// harness logs (tests/fixtures/harness_gate, made by tools/harness_gate_logs.py) it says when it
// cannot decide and draws the format shape from mmlu_generative's exact_match; each built-in shape
// shows its evidence in the chart. The three-scorers page, which needs the real model, is
// scoring-lesson-scorers.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations, COLOUR_RULES, launch, BASE_URL, watchConsole, screenshot, summaryText } from './lib.mjs';
import { idleRenders, serverMatch, settle, tabTo, widgetOf } from './widget-helpers.mjs';

const HARNESS = new URL('../fixtures/harness_samples/', import.meta.url).pathname;
const files = (role) => readdirSync(join(HARNESS, role)).sort().map((name) => ({
  name, mimeType: 'application/json', buffer: readFileSync(join(HARNESS, role, name)),
}));
// Real lm_eval 0.4.13 --log_samples files, gzipped as they may be kept: 3 subjects × 40 questions
// (3x40) or 20 subjects × 6 (20x6), the letter task (mmlu_<subject>, acc) or the written answers
// (mmlu_<subject>_generative, exact_match).
const GATE_LOGS = new URL('../fixtures/harness_gate/', import.meta.url).pathname;
const logs = (which, shots, generative) => readdirSync(join(GATE_LOGS, which, shots)).sort()
  .filter((name) => name.includes('_generative_') === generative)
  .map((name) => ({ name, mimeType: 'application/gzip', buffer: readFileSync(join(GATE_LOGS, which, shots, name)) }));

let browser;
let context;
before(async () => {
  browser = await launch();
  context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
});
after(async () => { await browser.close(); });

test('the lesson page: ladder, MathML, widget, axe in light and dark, 320 px', async () => {
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/scoring-lesson/`);
  assert.ok(await page.locator('h3.rung').count() >= 20);
  assert.ok(await page.locator('math').count() >= 5);
  assert.equal(await page.locator('section.widget[data-widget="two-run-gate"]').count(), 1);
  assert.deepEqual(await axeViolations(page), []);
  await page.emulateMedia({ colorScheme: 'dark' }); // only colours change: their rules again
  assert.deepEqual(await axeViolations(page, { rules: COLOUR_RULES }), []);
  await page.setViewportSize({ width: 320, height: 900 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= 320, `the page is ${wide} px wide at 320 px`);
  await screenshot(page, 'scoring-lesson-320-dark');
  await page.goto(`${BASE_URL}/scoring-lesson/overlap`);
  assert.deepEqual(await axeViolations(page), [], 'the data-checks page');
  assert.deepEqual(problems, []);
  await page.close();
});

test('two-run gate: keyboard, server match, harness files, a bad line named', async () => {
  const name = 'two-run-gate';
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/scoring-lesson/widgets/${name}`);
  await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
  const widget = widgetOf(page, name);
  await settle(page, name, 0);
  assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /From SmolLM2-135M-Instruct's published runs .* over the whole MMLU test \(14,042 questions\): its 0-shot run \(production\) against its 5-shot run \(candidate\)\. Real runs, nothing simulated\./);

  let renders = await tabTo(page, `#w-${name}-multiple-range`);
  await page.keyboard.press('End');
  await settle(page, name, renders);
  const match = await serverMatch(page, name);
  assert.equal(match.liveMarks, match.serverMarks);
  assert.deepEqual(match.liveSummary, match.serverSummary);
  assert.match(match.liveSummary.join(' '), /at the level of 4 on the normal curve/);
  // Issue 40: the statistics' names (CR1, Student's t) are for engineers, in a fold of their own inside
  // "More about this figure", after the redraw as the server drew them; the reader's lines do without.
  const parts = await widget.locator('.widget-summary').evaluate((summary) => ({
    reader: [...summary.querySelectorAll(':scope > p, [data-role="summary-more"] > p')].map((p) => p.textContent).join(' '),
    engineers: [...summary.querySelectorAll('[data-role="summary-engineers"] > p')].map((p) => p.textContent).join(' '),
    fold: summary.querySelector('[data-role="summary-engineers"] > summary').textContent,
  }));
  assert.doesNotMatch(parts.reader, /CR1|Student's t/);
  assert.match(parts.reader, /paired delta [+−-][\d.]+ points/);
  assert.match(parts.engineers, /CR1/);
  assert.match(parts.engineers, /Student's t with \d+ degrees of freedom/);
  assert.equal(parts.fold, 'For engineers: the statistics behind it');
  await widget.locator('[data-role="summary-more"] > summary').click();
  await widget.locator('[data-role="summary-engineers"] > summary').click();
  await widget.locator('[data-role="summary-engineers"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'two-run-gate-engineers-fold');

  renders = await idleRenders(widget);
  await page.setInputFiles(`#w-${name}-production`, files('production'));
  await page.setInputFiles(`#w-${name}-candidate`, files('candidate'));
  await tabTo(page, '[data-action="compare-runs"]');
  await page.keyboard.press('Enter');
  await settle(page, name, renders);
  const text = await widget.locator('.widget-summary').evaluate(summaryText);
  assert.match(text, /Your files: production samples_mmlu_abstract_algebra_\S+ and 1 more against candidate samples_mmlu_abstract_algebra_\S+ and 1 more, scored by the harness's acc\./);
  assert.match(text, /6 paired questions in 2 subjects/);
  assert.equal(await widget.locator('.fig-bar-up, .fig-bar-down').count(), 2);

  renders = await idleRenders(widget);
  await page.setInputFiles(`#w-${name}-production`, { name: 'broken.jsonl', mimeType: 'application/json', buffer: Buffer.from('{"doc_id": 0}\n{oops') });
  await tabTo(page, '[data-action="compare-runs"]');
  await page.keyboard.press('Enter');
  await settle(page, name, renders);
  // A malformed file: the error beside the inputs (role=alert, the JSON error whole), no chart.
  const alert = widget.locator('[role="alert"][data-role="load-error"][data-from="files"]');
  assert.match(await alert.innerText(), /broken\.jsonl line 1: no task: name the file samples_<task>_<date>\.jsonl as the harness does$/);
  assert.equal(await widget.locator('.fig-bar-up, .fig-bar-down').count(), 0);
  assert.equal(await widget.locator('[data-role="subject-table"] tbody tr').count(), 0);
  await widget.locator('.gate-load > details.for-engineers > summary').click();
  await alert.scrollIntoViewIfNeeded();
  await screenshot(page, 'two-run-gate-error');
  assert.deepEqual(await axeViolations(page), []);
  await page.click('[data-action="clear-results"]');
  assert.equal(await alert.isHidden(), true);
  assert.deepEqual(problems, []);
  await page.close();
});

// What a chart shows besides the subjects: the pairs' rows (their names), the bars' group colours,
// and whether the zero line is marked as inside the band.
const evidenceOf = (widget) => widget.locator('svg[data-role="figure"]').evaluate((svg) => ({
  texts: [...svg.querySelectorAll('text')].map((t) => t.textContent),
  groups: new Set([...svg.querySelectorAll('.fig-bar-group')].map((b) => [...b.classList].find((c) => c.startsWith('fig-group-')))).size,
  groupBars: svg.querySelectorAll('.fig-bar-group').length,
}));

test('one gate: each of the four shapes can be chosen and shows its shape, verdict, explanation and evidence', async () => {
  const shapes = {
    noise: [/^Verdict: ship\. Shape: noise\./, /What it means: the two models differ by less/],
    knowledge: [/^Verdict: investigate\. Shape: knowledge regression/, /What it means: one group of subjects/],
    // The published runs' format regression also moved letter scoring a little (past its band): investigate.
    // Both letter runs are at chance: the words say it shows the shape, not kept knowledge.
    format: [/^Verdict: investigate\. Shape: format regression\./, /What it means: written answers went from 24\.8% to 2\.3% while letter scores barely moved \(24\.8% to 23\.1%\)\. That is the shape of a format regression, but both letter runs are at chance/],
    contamination: [/^Verdict: investigate\. Shape: contamination signature\./, /What it means: the score rose on the public questions but not on held-out ones \(questions that are not public/],
  };
  for (const name of ['two-run-gate', 'release-gate']) {
    const paper = name === 'two-run-gate' ? 'scoring-lesson' : 'mmlu';
    const page = await context.newPage();
    const problems = watchConsole(page);
    await page.goto(`${BASE_URL}/${paper}/widgets/${name}`);
    await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
    const widget = widgetOf(page, name);
    for (const [shape, [verdict, explanation]] of Object.entries(shapes)) {
      const renders = await idleRenders(widget);
      await page.selectOption(`#w-${name}-source`, shape);
      await settle(page, name, renders);
      const text = await widget.locator('.widget-summary').evaluate(summaryText);
      assert.match(text, verdict, `${name} ${shape}`);
      assert.match(text, explanation, `${name} ${shape}`);
      assert.match(text, /Simulated|Part simulated|Real runs, nothing simulated/, `${name} ${shape} says what is simulated`);
      if (shape !== 'noise') assert.match(text, /A shape is a hypothesis for a person to check/, `${name} ${shape}`);
      const bars = await widget.locator('.fig-bar-up, .fig-bar-down, .fig-bar-group').count();
      assert.ok(bars >= 14, `${name} ${shape} draws its subjects`);
      assert.equal(await widget.locator('[data-role="subject-table"] tbody tr').count(), bars);
      // The evidence of the shape named, in the chart; the key states the width the setting does.
      const { texts, groups, groupBars } = await evidenceOf(widget);
      assert.ok(texts.some((t) => /^gate width 2: ± \d+\.\d\d points/.test(t)), `${name} ${shape}: ${texts.slice(0, 3)}`);
      const rows = texts.filter((t) => /^(letter scoring|written answers|public|held-out): [+−-]/.test(t)).map((t) => t.split(':')[0]);
      assert.deepEqual(rows, { format: ['letter scoring', 'written answers'], contamination: ['public', 'held-out'] }[shape] || [], `${name} ${shape}`);
      assert.equal(groupBars ? groups : 0, shape === 'knowledge' ? 4 : 0, `${name} ${shape}: the bars coloured by MMLU's four groups`);
      if (shape === 'knowledge') assert.equal(groupBars, bars);
      if (shape === 'noise') assert.ok(texts.includes('0 is inside the band'), 'the noise band crosses zero, and says so');
      await widget.locator('svg[data-role="figure"]').scrollIntoViewIfNeeded();
      if (name === 'two-run-gate') await screenshot(page, `two-run-gate-${shape}`);
    }
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('the gate on real harness logs: too little data on 3 × 40 questions, the format shape from mmlu_generative', async () => {
  const name = 'two-run-gate';
  const wide = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await wide.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/scoring-lesson/widgets/${name}`);
  await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
  const widget = widgetOf(page, name);
  const summary = () => widget.locator('.widget-summary').evaluate(summaryText);
  await widget.locator('details.widget-data > summary').click();

  // 0-shot as production, 5-shot as candidate, letter scoring: a band far over ±5 points.
  let renders = await idleRenders(widget);
  await page.setInputFiles(`#w-${name}-production`, logs('3x40', '0shot', false));
  await page.setInputFiles(`#w-${name}-candidate`, logs('3x40', '5shot', false));
  await page.click('[data-action="compare-runs"]');
  await settle(page, name, renders);
  let text = await summary();
  assert.match(text, /^Verdict: too little data to decide\. Shape: none: too little data to tell\./);
  assert.match(text, /120 paired questions in 3 subjects/);
  assert.match(text, /Too little data to decide: a band of ±\d+\.\d\d points is wider than ±5, so a drop of several points would pass as noise\. At today's spread, a band of ±2 points would take about [\d,]+ questions in these 3 subjects/);
  assert.doesNotMatch(text, /Ship the candidate/);
  // "Which two runs" names the files drawn; the axis stops at what a score can move.
  assert.match(text, /paired delta \+10\.83 points/);
  assert.match(await page.locator(`#w-${name}-source option:checked`).innerText(),
    /^your files: samples_mmlu_abstract_algebra_\S+ and 2 more vs samples_mmlu_abstract_algebra_\S+ and 2 more$/);
  const ticks = await widget.locator('svg[data-role="figure"] text.fig-tick[text-anchor="end"]').allTextContents();
  const values = ticks.filter((t) => /^[+−]?\d+$/.test(t)).map((t) => Number(t.replace('−', '-')));
  assert.ok(values.length >= 3 && Math.max(...values.map(Math.abs)) <= 100, `ticks ${ticks}`);
  assert.ok((await evidenceOf(widget)).texts.includes('0 is inside the band'));
  await widget.locator('svg[data-role="figure"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'two-run-gate-harness-too-little-1280');

  // A release that dropped the worked examples: 5-shot production, 0-shot candidate, by letter and by
  // the written answers of mmlu_generative (scored by exact_match): the format shape, both pairs drawn.
  // Three subjects cannot show it (the written answers' band is ±47 points): these logs are 20 × 6.
  renders = await idleRenders(widget);
  await page.setInputFiles(`#w-${name}-production`, logs('20x6', '5shot', false));
  await page.setInputFiles(`#w-${name}-candidate`, logs('20x6', '0shot', false));
  await widget.locator('.gate-load details:not(.for-engineers) > summary').click();
  await page.setInputFiles(`#w-${name}-gen-production`, logs('20x6', '5shot', true));
  await page.setInputFiles(`#w-${name}-gen-candidate`, logs('20x6', '0shot', true));
  await page.click('[data-action="compare-runs"]');
  await settle(page, name, renders);
  text = await summary();
  assert.match(text, /Shape: format regression\./);
  assert.match(text, /written answers: production samples_mmlu_abstract_algebra_generative_\S+ and 19 more against candidate samples_mmlu_abstract_algebra_generative_\S+ and 19 more, scored by the harness's exact_match/);
  const rows = (await evidenceOf(widget)).texts.filter((t) => /^(letter scoring|written answers): /.test(t));
  assert.equal(rows.length, 2, `${rows}`);
  for (const [width, scheme] of [[1280, 'light'], [1280, 'dark'], [360, 'light'], [360, 'dark']]) {
    await page.setViewportSize({ width, height: 1000 });
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForFunction(([n, w]) => Number(document.querySelector(`section.widget[data-widget="${n}"]`).dataset.shownWidth) < w,
      [name, width + 1]);
    await widget.locator('svg[data-role="figure"]').scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await screenshot(page, `two-run-gate-harness-format-${width}-${scheme}`);
  }
  assert.deepEqual(await axeViolations(page), []);

  // A file cut short: the whole JSON error, by the file inputs (right after "Compare these runs", below the
  // chart, as the empty chart says).
  renders = await idleRenders(widget);
  await page.setInputFiles(`#w-${name}-production`, { name: 'samples_mmlu_anatomy_2026-01-01T00-00-00.jsonl', mimeType: 'application/json',
    buffer: Buffer.from('{"doc_id": 0, "acc": 1.0, "target": "unterminated') });
  await page.click('[data-action="compare-runs"]');
  await settle(page, name, renders);
  const alert = widget.locator('[data-role="load-error"][data-from="files"]');
  assert.match(await alert.innerText(), /line 1: not valid JSON \(Unterminated string starting at column \d+\)$/);
  assert.equal(await alert.evaluate((box) => box.previousElementSibling.dataset.action), 'compare-runs');
  assert.ok(await widget.locator('[data-role="load-error"][data-from="paste"]').isHidden());
  assert.ok((await evidenceOf(widget)).texts.includes('No chart: the error is below, by the file inputs'));
  await alert.scrollIntoViewIfNeeded();
  await screenshot(page, 'two-run-gate-harness-error-360-dark');
  // Choosing an example in "Which two runs" goes back to the examples.
  renders = await idleRenders(widget);
  await page.selectOption(`#w-${name}-source`, 'noise');
  await settle(page, name, renders);
  assert.match(await summary(), /^Verdict: ship\. Shape: noise\./);
  assert.equal(await page.locator(`#w-${name}-source option[data-loaded]`).count(), 0);
  assert.ok(await alert.isHidden());
  assert.deepEqual(problems, []);
  await wide.close();
});

test('micro against macro: choose the published run by keyboard; the redraw equals the server', async () => {
  const name = 'micro-macro';
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${BASE_URL}/scoring-lesson/widgets/${name}`);
  await page.waitForSelector(`section.widget[data-widget="${name}"][data-worker="ready"]`, { timeout: 90_000 });
  await settle(page, name, 0);
  const widget = widgetOf(page, name);
  // It opens on the simulated run where the averages part (real results part by tenths of a point).
  assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /a simulated run, not real results.*they differ by \+21\.1 points/);
  let renders = await tabTo(page, `#w-${name}-source`);
  await page.keyboard.press('Home'); // the first choice: Table 1's GPT-3 X-Large
  await settle(page, name, renders);
  assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /Table 1's GPT-3 X-Large/);
  renders = await idleRenders(widget);
  await page.keyboard.press('End'); // back to the simulated run
  await settle(page, name, renders);
  renders = await idleRenders(widget);
  await page.keyboard.press('ArrowUp'); // the live model's published 5-shot run
  await settle(page, name, renders);
  const match = await serverMatch(page, name);
  assert.equal(match.liveMarks, match.serverMarks);
  assert.deepEqual(match.liveSummary, match.serverSummary);
  assert.match(match.liveSummary.join(' '), /published 5-shot run over all 14,042 test questions/);
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('one product at 360 px: the lesson is a lesson, its own credits, no internal names, numbers from 1; formulas fit; touch targets 24 px; axe clean', async () => {
  const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
  await phone.route(/\/pyodide\//, (route) => route.abort());
  const page = await phone.newPage();
  for (const path of ['/mmlu/', '/mmlu-pro/', '/scoring-lesson/']) {
    await page.goto(`${BASE_URL}${path}`);
    await page.waitForSelector('section.widget[data-ready="true"]');
    await page.waitForTimeout(300);
    const wide = await page.$$eval('.equation', (els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id));
    assert.deepEqual(wide, [], `formulas scroll sideways on ${path}`);
    const small = await page.$$eval('main input[type="range"], main input[type="checkbox"]', (els) => els
      .filter((e) => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height < 24).map((e) => e.id));
    assert.deepEqual(small, [], `touch targets under 24 px on ${path}`);
    const text = await page.evaluate(() => document.body.innerText);
    for (const internal of ['MMLU_DATA_DIR', 'benchmarks/', 'papers/']) assert.ok(!text.includes(internal), `${path} shows ${internal}`);
    assert.equal(await page.locator('.site-footer p:not(.offline-note)').count(), 1, `${path} credits its own document only`);
  }
  assert.equal(await page.locator('.title-block .kicker').innerText(), 'LESSON');
  // The header names its subject once: no authors' line beside the line that cites the benchmark.
  assert.equal(await page.locator('.title-block .authors').count(), 0);
  assert.match(await page.locator('.title-block .venue').innerText(), /^On the MMLU benchmark \(ICLR 2021\): Hendrycks et al\. \(2020\), arXiv:2009\.03300 · Glossary$/);
  assert.match(await page.locator('.citation summary').innerText(), /^Cite this lesson/);
  assert.doesNotMatch(await page.locator('#bibtex').textContent(), /Hendrycks/);
  assert.match(await page.locator('.site-footer').innerText(), /^A lesson on scoring MMLU/);
  assert.deepEqual(await axeViolations(page), [], 'axe on the lesson at 360 px');
  await screenshot(page, 'scoring-lesson-360-one-product');
  await page.goto(`${BASE_URL}/scoring-lesson/overlap`);
  assert.match(await page.locator('.site-footer').innerText(), /^A lesson on scoring MMLU/);
  assert.doesNotMatch(await page.evaluate(() => document.body.innerText), /MMLU_DATA_DIR|\.py\b|benchmarks\//);
  await page.fill('#overlap-text', 'Find all zeros in the indicated finite field of the given polynomial with coefficients in that field.');
  await Promise.all([page.waitForNavigation(), page.click('.text-check button')]);
  assert.match(await page.locator('.overlap-where').first().innerText(), /^abstract algebra, test question [1-9]\d*:/);
  assert.deepEqual(await axeViolations(page), [], 'axe on the overlap page with its matches');
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 360);
  await screenshot(page, 'overlap-360-matches');
  await phone.close();
});

test('flips view: from the gate at 360 and 1280 px, filtered, paged, a question to the live form and back; harness files; axe clean', async () => {
  const name = 'question-flips';
  for (const width of [360, 1280]) {
    const page = await context.newPage(); // the context's stored Pyodide snapshot starts the harness part sooner
    await page.setViewportSize({ width, height: 900 });
    const problems = watchConsole(page);
    // The gate where a reader meets it, in the lesson (which starts no Pyodide until it is touched).
    await page.goto(`${BASE_URL}/scoring-lesson/`);
    const gate = page.locator('section.widget[data-widget="two-run-gate"]');
    const gateDelta = (await gate.locator('.widget-summary').evaluate(summaryText)).match(/paired delta ([+−-][\d.]+) points/)[1];
    await gate.locator('.gate-flips-link a').click();
    await page.waitForURL(/\/scoring-lesson\/widgets\/question-flips$/);
    await page.waitForSelector(`section.widget[data-widget="${name}"][data-ready="true"]`);
    const widget = widgetOf(page, name);
    // The counts are the gate's: the net flips over the questions are its paired delta.
    const summary = await widget.locator('.widget-summary').evaluate(summaryText);
    assert.match(summary, /9,670 of 14,042 questions flipped: 2,245 right to wrong, 2,479 wrong to right/);
    assert.match(summary, new RegExp(`Net \\+234 questions over 14,042: a paired delta of \\${gateDelta} points`));
    assert.equal(await widget.locator('.flip-card').count(), 20);

    // Filter with the keyboard: the right-to-wrong flips of one subject, redrawn and put in the address.
    let renders = await tabTo(page, `#w-${name}-kind`);
    await page.selectOption(`#w-${name}-kind`, 'right_to_wrong');
    await settle(page, name, renders);
    renders = await idleRenders(widget);
    await page.selectOption(`#w-${name}-subject`, 'high_school_mathematics');
    await settle(page, name, renders);
    assert.match(page.url(), /kind=right_to_wrong/);
    assert.match(page.url(), /subject=high_school_mathematics/);
    const cards = widget.locator('.flip-card');
    assert.ok(await cards.count() > 0);
    assert.equal(await widget.locator('.flip-card:not(.flip-right_to_wrong)').count(), 0);
    for (const where of await widget.locator('.flip-where').allInnerTexts()) assert.match(where, /high school mathematics/);
    assert.match(await widget.locator('.widget-summary').evaluate(summaryText), /of 270 questions in high school mathematics flipped/);
    assert.deepEqual(await axeViolations(page), [], `axe at ${width} px`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, `no sideways scroll at ${width} px`);
    await screenshot(page, `question-flips-${width}`);

    // The next page, by keyboard: its address, its numbering, and the focus on the list's heading.
    await page.locator('.flips-pages a[rel="next"]').focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('.flips-heading').textContent.includes('page 2 of'));
    assert.match(page.url(), /page=2/);
    assert.equal(await widget.locator('ol.flips-list').getAttribute('start'), '21');
    assert.equal(await page.evaluate(() => document.activeElement.className), 'flips-heading');

    // "Run it live": the live form with that question in it; back: the same filtered page.
    const question = await cards.first().locator('.flip-question').innerText();
    await cards.first().locator('a', { hasText: 'Run it live' }).click();
    await page.waitForURL(/\/mmlu\/run\?subject=high_school_mathematics&split=test&number=\d+/);
    assert.equal((await page.locator('.ls-preview-q').innerText()).trim(), question.trim());
    await screenshot(page, `question-flips-live-form-${width}`);
    await page.goBack();
    await page.waitForSelector(`section.widget[data-widget="${name}"][data-ready="true"]`);
    assert.match(page.url(), /kind=right_to_wrong.*page=2/);
    assert.equal(await widget.locator('.flip-card').first().locator('.flip-question').innerText(), question);
    if (width === 1280) {
      // A reader's harness logs, read in the page: the same counts as the gate's on the same files (6 questions).
      const renders = await idleRenders(widget);
      await widget.locator('details.widget-data summary').click();
      await page.setInputFiles(`#w-${name}-production-files`, files('production'));
      await page.setInputFiles(`#w-${name}-candidate-files`, files('candidate'));
      await page.click('[data-action="compare-runs"]');
      await settle(page, name, renders);
      const loaded = await widget.locator('.widget-summary').evaluate(summaryText);
      assert.match(loaded, /of 6 questions flipped/);
      assert.match(loaded, /From your loaded runs\./);
      // The subject filter offers the files' subjects now, and the published view's subject was let go.
      assert.deepEqual(await page.$$eval(`#w-${name}-subject option`, (os) => os.map((o) => o.value)), ['any', 'abstract_algebra', 'astronomy']);
      assert.equal(await widget.locator('.widget-messages li').count(), 0);
      assert.match(await widget.locator('.flip-card a').first().getAttribute('href'), /^\/mmlu\/run\?subject=\w+&source=own&question=/);
      await screenshot(page, 'question-flips-harness');
      assert.deepEqual(await axeViolations(page), [], 'axe on a harness comparison');
    }
    assert.deepEqual(problems, []);
    await page.close();
  }
});
