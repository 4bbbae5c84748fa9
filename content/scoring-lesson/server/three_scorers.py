"""The scoring lesson's three-scorers widget, its server side: one real MMLU question, scored the ways
the harness's tasks do.

Letter log-likelihood (``mmlu``), full-answer continuation (``mmlu_continuation``, summed and per
character) and generation read by the task's parser (``mmlu_generative``), each with the prompt as
plain text and wrapped in the model's chat template; benchmarks/mmlu/server/harness_tasks.py builds the prompts and
reads the answers as the harness does. Scoring goes through the live model's queue (the same
400/413/429/503/504 answers as ``POST /api/score``; the whole form is budgeted for all six runs,
``check_form_budget``); generation through the service's ``generate_until``
(greedy, a lane of the same queue, stopped at the task's stop sequences or at
``PAGE_MAX_NEW_TOKENS``).

The widget (widgets/three-scorers.html) is every benchmark's live form (benchmarks/server/live_form.py,
static/js/widgets/live-form.js): ``widget_variables`` draws its form for the lesson's ``live_widget``
hook, and ``form_answer`` answers it for the ``live_widget_form`` hook, posted (a plain form, so it
works without JavaScript) to the widget's page or, inside an embed, to the embed itself: the whole
page, or with ``?fragment=1`` only the results (widgets/three-scorers-results.html). The old address
of the page, ``/scoring-lesson/three-scorers``, redirects to the widget's page.
"""
from __future__ import annotations

from flask import Blueprint, current_app, redirect, request, url_for

from benchmarks.live_runs import model_name
from benchmarks.mmlu.server import harness_tasks as harness
from benchmarks.mmlu.server.harness_tasks import HarnessPrompt
from benchmarks.server import budget, live_form
from benchmarks.server.reading import why_it_stopped

bp = Blueprint("scoring_lesson_scorers", __name__)
# The document whose widget this is (its results template).
DOCUMENT = "scoring-lesson"  # this widget's document
DEFAULT = {"subject": "astronomy", "number": "1", "shots": "0"}  # questions numbered from 1, as a reader counts
FIELDS = tuple(DEFAULT)
# The control each refused field belongs to; a prompt too long for the model is fixed with fewer worked examples.
CONTROLS = {"subject": "ts-subject", "index": "ts-number", "shots": "ts-shots", "question": "ts-shots"}
MODES = ("inline", "page", "embed")
# The harness lets the model write up to 256 tokens; the parser reads only the first line, and a
# small model's first line is short, so the widget stops sooner to keep a request short.
PAGE_MAX_NEW_TOKENS = 32
SIDES = ("plain", "chat")
# The form's cost budget (check_form_budget): the whole form may have the model read FORM_WORK_FACTOR
# times what one POST /api/score may (SCORER_MAX_WORK_CHARS: 16,000 work characters by default, so
# 32,000 for the form, about 40 CPU-s at most when nothing is cached). It refuses 2,243 of MMLU's 14,042 test questions at
# 5 shots (7 subjects: the history passages, law, …) and 416 at 3 shots; the costliest,
# high_school_european_history at 5 shots, would have cost about 180 CPU-s (issue 26).
FORM_WORK_FACTOR = 2
CHAT_TURN_CHARS = 32  # what the chat template adds around each turn ("<|im_start|>user\n" … "<|im_end|>\n")


def chat_template(tokenizer):
    """The model's chat template as the harness's HFLM.apply_chat_template calls it (turns → text,
    ending in the assistant's header), or None when the tokenizer has none (harness_tasks.chat_renderer)."""
    return harness.chat_renderer(tokenizer)


def letter_side(result: dict) -> dict:
    return {"prompt": result["prompt"]["text"], "prediction": result["prediction"],
            "rows": [(o["letter"], o["continuation"], o["tokens"], o["logprob"]) for o in result["options"]]}


def continuation_side(result: dict) -> dict:
    """mmlu_continuation's two decisions from one scoring: acc (summed) and acc_norm (per character)."""
    choices = [o["choice"] for o in result["options"]]
    summed = {o["letter"]: o["logprob"] for o in result["options"]}
    normalised = harness.per_character(summed, choices)
    return {"prompt": result["prompt"]["text"], "summed": harness.best(summed), "normalised": harness.best(normalised),
            "rows": [(o["letter"], o["continuation"], o["tokens"], len(o["choice"]), o["logprob"], normalised[o["letter"]])
                     for o in result["options"]]}


def generation_side(prompt: str, written: str, last: dict) -> dict:
    response = harness.get_response(written)
    stopped = why_it_stopped(last["reason"], PAGE_MAX_NEW_TOKENS, "a line break or “</s>”", meaning="it wrote a stop sequence",
                             cap_note=f" (this widget's; the harness allows {harness.HARNESS_MAX_GEN_TOKS})")
    return {"prompt": prompt, "generated": written, "stopped": stopped, "tokens": last["tokens"],
            "response": response, "prediction": harness.generated_letter(response)}


def decisions(letter: dict, continuation: dict, generation: dict) -> list[dict]:
    """The page's summary rows: each scorer's decision on each side it ran ({side: view}; a side
    missing, as the chat side of a model without a template, decides None)."""
    def pick(views, field):
        return {side: views[side][field] if views.get(side) else None for side in SIDES}
    return [
        {"name": "Letter log-likelihood", "task": "mmlu", "metric": "acc", **pick(letter, "prediction")},
        {"name": "Full answer, summed", "task": "mmlu_continuation", "metric": "acc", **pick(continuation, "summed")},
        {"name": "Full answer, per character", "task": "mmlu_continuation", "metric": "acc_norm",
         **pick(continuation, "normalised")},
        {"name": "Generated, then parsed", "task": "mmlu_generative", "metric": "exact_match",
         **pick(generation, "prediction")},
    ]


def _checked(values: dict) -> dict:
    """The real question's Scorer arguments, checked as POST /api/score checks them (else ScoreFailed)."""
    from benchmarks.mmlu.data import DataMissing
    from benchmarks.mmlu.server import dataset
    from benchmarks.mmlu.server.validation import InvalidRequest, TooCostly, check_budget, score_arguments
    from benchmarks.server.failures import ScoreFailed
    from benchmarks.server.live_form import question_index

    body = {"subject": values["subject"], "split": "test", "index": question_index(values["number"]),
            "shots": values["shots"], "method": "option"}
    try:
        arguments = score_arguments(body, dataset())
        check_budget(arguments, current_app.config["SCORER_MAX_WORK_CHARS"])
        check_form_budget(arguments, FORM_WORK_FACTOR * current_app.config["SCORER_MAX_WORK_CHARS"])
    except TooCostly as error:
        raise ScoreFailed(413, str(error), problems=error.problems) from None
    except InvalidRequest as error:  # each problem is said as the form's reader reads it, beside its field
        raise ScoreFailed(400, str(error), problems=error.problems) from None
    except DataMissing as error:
        raise ScoreFailed(503, str(error)) from None
    return arguments


def form_work(arguments: dict, shots: int | None = None) -> int:
    """What one post of this form has the model read, in the work characters of
    benchmarks/mmlu/server/validation.py (about 1.3 ms of CPU each when nothing is cached), for all
    six of its model runs: letter and full answer (each prompt plus twice its continuations) and
    a generation (its prompt plus PAGE_MAX_NEW_TOKENS new tokens), on the plain side and again on
    the chat side (the same turns, each wrapped in the template's few characters). ``shots``: with
    that many of the request's worked examples instead of all of them."""
    from benchmarks.server.multiple_choice import continuations

    examples = arguments["shots"][:shots] if shots is not None else arguments["shots"]
    subject, question, choices = arguments["subject"], arguments["question"], arguments["choices"]
    work = 0
    for task, method in (("mmlu", "letter"), ("mmlu_continuation", "option"), ("mmlu_generative", None)):
        text = HarnessPrompt(task).text(subject, question, choices, examples)
        if method is None:
            read = budget.work(len(text), new_tokens=PAGE_MAX_NEW_TOKENS)
        else:
            read = budget.work(len(text), sum(len(c) for c in continuations(method, choices)))
        work += 2 * read + CHAT_TURN_CHARS * (2 * len(examples) + 2)  # plain, then chat (system, turns, question)
    return work


def check_form_budget(arguments: dict, limit: int) -> None:
    """Raise TooCostly (a 413 on the shots field) when the whole form's work is over ``limit``,
    naming the number of worked examples that would fit, or asking for another question."""
    from benchmarks.mmlu.server.validation import TooCostly
    from benchmarks.server.failures import Problem

    if limit <= 0:
        return
    work = form_work(arguments)
    if work <= limit:
        return
    fits = next((k for k in range(len(arguments["shots"]) - 1, -1, -1) if form_work(arguments, k) <= limit), None)
    if fits is None:
        fix, words = "pick a shorter question", "choose a shorter question (another number, or another subject)"
    else:
        fix = f"use {fits} worked example{'s' if fits != 1 else ''} or fewer (shots), or pick a shorter question"
        words = (f"choose {fits} worked example{'s' if fits != 1 else ''} or fewer, or a shorter question "
                 "(another number, or another subject)")
    raise TooCostly(Problem(
        "shots",
        f"Scoring this question three ways, plain and in the chat template (six model runs, two of them "
        f"generations), would have the model read about {work:,} characters; the limit per form is {limit:,}. "
        f"To fit: {fix}.",
        f"This is more than the model may read for one answer of this widget: it would read about {work:,} "
        f"characters across its six runs, and the limit is {limit:,}. To fit: {words}.",
    ))


def _score(arguments: dict, prompt_format: HarnessPrompt, method: str) -> dict:
    from benchmarks.server import live

    return live.score(**{**arguments, "prompt_format": prompt_format, "method": method,
                         "delimiter": prompt_format.delimiter})


def _generate(arguments: dict, prompt_format: HarnessPrompt) -> dict:
    from benchmarks.server import live

    text = prompt_format.text(arguments["subject"], arguments["question"], arguments["choices"], arguments["shots"])
    written, last = live.written(live.generation(text, PAGE_MAX_NEW_TOKENS, stop=harness.STOP, field="shots"))
    return generation_side(text, written, last)


def score_three_ways(values: dict) -> dict:
    """Every scorer on both sides for one real test question; raises ScoreFailed with the answer to give."""
    from benchmarks.server import service
    from benchmarks.server.reading import shots_note

    arguments = _checked(values)
    key, index = arguments["key"], arguments.pop("index")
    arguments.pop("split")
    first = _score(arguments, HarnessPrompt("mmlu"), "letter")  # loads the model if it must
    render = chat_template(service().scorer.loaded.tokenizer)
    formats = {"plain": None} if render is None else {"plain": None, "chat": render}
    letter = {side: letter_side(first if side == "plain" else _score(arguments, HarnessPrompt("mmlu", f), "letter"))
              for side, f in formats.items()}
    continuation = {side: continuation_side(_score(arguments, HarnessPrompt("mmlu_continuation", f), "option"))
                    for side, f in formats.items()}
    generation = {side: _generate(arguments, HarnessPrompt("mmlu_generative", f)) for side, f in formats.items()}
    summary = decisions(letter, continuation, generation)
    return {"subject": arguments["subject"], "index": index, "key": key, "question": arguments["question"],
            "choices": arguments["choices"], "shots_used": first["shots_used"], "shots_note": shots_note(first),
            "model": model_name(first["model"]["name"]), "sides": list(formats), "summary": summary,
            "right": sum(row[side] == key for row in summary for side in formats), "decided": len(summary) * len(formats),
            "letter": letter, "continuation": continuation, "generation": generation}


def widget_variables(mode: str, values: dict | None = None, found: dict | None = None,
                     failure=None) -> dict:
    """What widgets/three-scorers.html draws: the form (with the reader's values), and the result or
    the failure (a ScoreFailed, its problems placed on the form's controls). ``mode`` is where the
    widget is drawn, or for the script's results the copy that asked (its headings follow it)."""
    from benchmarks.mmlu.data import DataMissing
    from benchmarks.mmlu.server import dataset
    from benchmarks.server import service

    try:
        subjects = sorted(dataset().subjects)
    except DataMissing:
        subjects = []
    # Without JavaScript the lesson's copy posts to the widget's page; an embed posts to itself, in its frame.
    action = url_for("widgets.embed" if mode == "embed" else "widgets.page", slug=DOCUMENT, name="three-scorers")
    return {"ts": {"subjects": subjects, "typed": values or dict(DEFAULT), "found": found, "failure": failure,
                   "errors": failure.on_form(CONTROLS) if failure else None,
                   "action": action, "level": 3 if mode == "inline" else 1, "status": service().status(),
                   "api": {"model": url_for("live_model.model_status"), "load": url_for("live_model.model_load")},
                   "cap": PAGE_MAX_NEW_TOKENS, "harness_cap": harness.HARNESS_MAX_GEN_TOKS,
                   "commit": harness.HARNESS_COMMIT}}


def form_answer(mode: str, whole_page):
    """The posted form, scored: the whole page (``whole_page(variables)``) under the answer's status,
    or for the script only the results. The engine has refused posts from other sites' pages; a post
    without the form's fields or this client's current token is refused here, before the model."""
    from benchmarks.server.failures import ScoreFailed

    values = {key: request.form.get(key, "") for key in FIELDS}
    found = failure = None
    try:
        live_form.check_post("subject" in request.form,
                             "The form arrived without a subject; choose one and press “Score it three ways”.",
                             "subject", "“Score it three ways”")
        found = score_three_ways(values)
    except ScoreFailed as error:
        failure = error
    # The script's results are drawn for the copy that sent the form (the lesson's posts to the widget's page).
    shown_in = request.form.get("shown_in") if request.form.get("shown_in") in MODES else mode
    return live_form.answer(f"{DOCUMENT}/widgets/three-scorers-results.html",
                            widget_variables(shown_in, values, found, failure),
                            lambda: whole_page(widget_variables(mode, values, found, failure)), failure)


@bp.get("/scoring-lesson/three-scorers")
def old_address():
    """The page this widget grew from; links to it keep working."""
    return redirect(url_for("widgets.page", slug=DOCUMENT, name="three-scorers"), 301)
