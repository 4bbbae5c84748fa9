"""The MMLU document's "Run it yourself" page, ``/mmlu/run``, and its form: read the fields, turn
them into a body for MMLU's score API (benchmarks/mmlu/server/api.py), build the template context.

    GET  /mmlu/run    the page; POST /mmlu/run runs the form without JavaScript (with ?fragment=1
                      only the results panel comes back, always as a 200, for the script)

The same template (widgets/live-scoring.html) serves the page, the widget inside the document and
the embeddable widget; without JavaScript the form posts to /mmlu/run and the server renders the
result. The form numbers a split's questions from 1 (``number``), as a reader counts; the API's
``index`` counts from 0. A failed run's problems are shown beside the controls they belong to
(``CONTROLS``).
"""
from __future__ import annotations

import random

from flask import Blueprint, current_app, render_template, request, url_for

from benchmarks.live_runs import model_name
from benchmarks.mmlu.data import LETTERS, DataMissing
from benchmarks.mmlu.prompt import MAX_SHOTS
from benchmarks.mmlu.server import dataset
from benchmarks.mmlu.server.api import run_score
from benchmarks.mmlu.server.published_runs import published_answer
from benchmarks.mmlu.server.reader import MMLUData
from benchmarks.mmlu.server.validation import MAX_CHOICE_CHARS, MAX_QUESTION_CHARS, QUESTION_SPLITS, choice_field
from benchmarks.server import live_form
from benchmarks.server.failures import ScoreFailed
from benchmarks.server.live_form import question_index
from benchmarks.server.reading import METHOD_TITLES
from engine.security import CSRF_FIELD, csrf_token  # the hidden field live_form.check_post checks on every POST
from engine.widgets import asset_url, share_links, widget_assets

bp = Blueprint("mmlu_run", __name__)
DOCUMENT = "mmlu"  # this page's document: its live-scoring widget, templates and assets

DEFAULT_SUBJECT = "astronomy"
CHOICE_FIELDS = tuple(f"choice_{letter.lower()}" for letter in LETTERS)
# The control each field of the checks (validation.py) belongs to: its problems are shown there.
CONTROLS = {"subject": "ls-subject", "split": "ls-split", "index": "ls-number", "shots": "ls-shots",
            "method": "ls-method", "rotation": "ls-rotation", "question": "ls-question", "answer": "ls-answer",
            "choices": "ls-choice-a",
            **{choice_field(i): f"ls-choice-{letter.lower()}" for i, letter in enumerate(LETTERS)}}


def default_values(data: MMLUData) -> dict:
    subjects = data.subjects
    # A damaged file makes its subject unavailable, not the page: the default is the first that reads.
    usable = (name for name in (DEFAULT_SUBJECT, *subjects) if name in subjects and data.usable(name))
    subject = next(usable, next(iter(subjects)))
    return {"subject": subject, "source": "real", "split": "test", "number": "1", "question": "",
            "choices": ["", "", "", ""], "answer": "", "shots": "0", "method": "letter", "rotation": "0"}


def values_from(source, data: MMLUData) -> dict:
    """The form's values as typed (still unchecked); "random" picks a question number here."""
    values = default_values(data)
    for name in ("subject", "source", "split", "number", "question", "answer", "shots", "method", "rotation"):
        if name in source:
            values[name] = source.get(name, "")
    values["choices"] = [source.get(name, "") for name in CHOICE_FIELDS]
    if source.get("action") == "random" and values["subject"] in data.subjects and values["split"] in QUESTION_SPLITS:
        values["source"] = "real"
        try:
            values["number"] = str(random.randrange(len(data.questions(values["subject"], values["split"]))) + 1)
        except DataMissing:  # the run itself then says which file is damaged
            values["number"] = "1"
    return values


def request_body(values: dict) -> dict:
    """The /api/score body the form stands for."""
    body = {"subject": values["subject"], "shots": values["shots"], "method": values["method"]}
    if values["source"] == "own":
        body.update(question=values["question"], choices=values["choices"], answer=values["answer"])
    else:
        body.update(split=values["split"], index=question_index(values["number"]))
        if values["rotation"] != "0":
            body["rotation"] = values["rotation"]
    return body


def _preview(values: dict, data: MMLUData):
    """The real question the form points at, if it points at one."""
    index = question_index(values["number"])
    if not isinstance(index, int) or index < 0:
        return None
    try:
        return data.question(values["subject"], values["split"], index)
    except (KeyError, IndexError, DataMissing):
        return None


def _split_size(values: dict, data: MMLUData) -> int | None:
    try:
        return len(data.questions(values["subject"], values["split"]))
    except (KeyError, DataMissing):
        return None


def _example(values: dict, question) -> dict | None:
    """The published run's answer to the question the form shows, as the widget prints it in place
    of a live result: {"shots", "model", "prediction", "key", "correct", "options": [{"letter",
    "choice", "probability"}]}; None for the reader's own question or where no run is published."""
    if question is None or values["source"] != "real" or values["split"] != "test" or values["rotation"] != "0":
        return None
    row = published_answer(values["subject"], question_index(values["number"]))
    if row is None:
        return None
    return {"shots": row["shots"], "model": model_name(row["model"]), "prediction": row["prediction"],
            "key": row["key"], "correct": row["correct"],
            "options": [{"letter": letter, "choice": choice, "probability": row["probabilities"][letter]}
                        for letter, choice in zip(LETTERS, question.choices, strict=True)]}


def context(values: dict, result: dict | None = None, failure=None) -> dict:
    """Everything widgets/live-scoring.html needs."""
    data = current_app.extensions["mmlu_data"]
    service = current_app.extensions["scoring"]
    document = current_app.extensions["documents"][DOCUMENT]
    question = _preview(values, data)
    return {
        "values": values,
        "subjects": [(s.name, s.title) for s in data.subjects.values()],
        "subject_title": data.subjects[values["subject"]].title if values["subject"] in data.subjects else None,
        "splits": QUESTION_SPLITS,
        "split_size": _split_size(values, data),
        "preview": question,
        "letters": LETTERS,
        "choice_fields": CHOICE_FIELDS,
        "max_shots": MAX_SHOTS,
        "methods": METHOD_TITLES,
        "limits": {"question": MAX_QUESTION_CHARS, "choice": MAX_CHOICE_CHARS},
        "result": result,
        "example": None if result else _example(values, question),
        "failure": failure,
        "errors": failure.on_form(CONTROLS) if failure else None,
        "share": share_links(document, document.widgets["live-scoring"], ""),
        # The results show the prompt's parts and their legend as the prompt anatomy does, in its colours.
        "prompt_style": asset_url(document, "prompt-anatomy.css"),
        "status": service.status(),
        "action": url_for("mmlu_run.page"),
        "csrf": {"field": CSRF_FIELD, "token": csrf_token()},
        "api": {"model": url_for("live_model.model_status"), "load": url_for("live_model.model_load"),
                "questions": url_for("mmlu_live.groups")},
    }


@bp.route("/mmlu/run", methods=["GET", "POST"])
def page():
    source = request.form if request.method == "POST" else request.args
    values = values_from(source, dataset())
    result = failure = None
    if request.method == "POST":
        try:
            live_form.check_post("subject" in request.form, "The form arrived without a subject; choose one and press Run.",
                                 "subject", "Run")
            result = run_score(request_body(values))
        except ScoreFailed as error:
            failure = error
    ls = context(values, result, failure)
    # The script's panel is drawn for where the widget sits (inside the document, on a page, embedded).
    mode = source.get("mode") if source.get("mode") in ("inline", "page", "embed") else "page"

    def whole_page():
        document = current_app.extensions["documents"][DOCUMENT]
        assets = widget_assets(document, document.widgets["live-scoring"])
        return render_template(f"{DOCUMENT}/server/run-page.html", ls=ls, assets=assets)

    return live_form.answer(f"{DOCUMENT}/widgets/live-scoring-results.html", {"ls": ls, "mode": mode},
                            whole_page, failure)
