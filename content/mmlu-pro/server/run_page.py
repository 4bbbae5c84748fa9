"""The MMLU-Pro document's question browser, ``/mmlu-pro/run``: a plain form that works without
JavaScript, scoring through MMLU-Pro's API functions (benchmarks/mmlu_pro/server/api.py).

    GET  /mmlu-pro/run   the question browser (?category=…&number=N&shots=K; N counts from 1, as the
                         page does); POST scores the chosen question; with ?fragment=1 (the page's
                         script) a GET answers the shown question alone and a POST the results alone
"""
from __future__ import annotations

import random

from flask import Blueprint, current_app, render_template, request, url_for

from benchmarks.mmlu_pro import prompt
from benchmarks.mmlu_pro.data import LETTERS
from benchmarks.mmlu_pro.server import dataset, published_answer
from benchmarks.mmlu_pro.server.api import DEFAULT_COT_TOKENS, score_question, written_answer
from benchmarks.server import live_form, service
from benchmarks.server.failures import Problem, ScoreFailed
from engine.widgets import asset_url

bp = Blueprint("mmlu_pro_run", __name__)
DOCUMENT = "mmlu-pro"  # this page's document: its style sheet and script

# The control each field belongs to: a wrong one is shown beside it. The page numbers a category's
# questions from 1 (``number``), as a reader counts; the API's ``index`` counts from 0.
CONTROLS = {"category": "run-category", "index": "run-number", "shots": "run-shots"}


def _chosen(source, data) -> tuple[str, int | None, int, list[Problem]]:
    """The category, question index and shots the form asks for, and the problems with what it sent
    (a wrong field is reported, not quietly replaced)."""
    problems = []
    category = source.get("category", "math").replace("-", " ")
    if category not in data.categories:
        problems.append(Problem("category", f"category must be one of {', '.join(data.categories)}",
                                "There is no such category; choose one from the list."))
        category = "math"
    size = len(data.in_category(category))
    number = source.get("number", "1").strip()
    index = None
    if source.get("random"):
        index = random.randrange(size)
    elif number.isascii() and number.isdigit() and 1 <= int(number) <= size:
        index = int(number) - 1
    else:
        problems.append(Problem("index", f"index must be a whole number from 0 to {size - 1}",
                                f"Type a question number from 1 to {size:,}: {category} has {size:,} test questions."))
    shots = source.get("shots", "5").strip()
    if not (shots.isascii() and shots.isdigit() and int(shots) <= prompt.MAX_SHOTS):
        problems.append(Problem("shots", f"shots must be a whole number from 0 to {prompt.MAX_SHOTS}",
                                f"Choose from 0 to {prompt.MAX_SHOTS} worked examples."))
        shots = "5"
    return category, index, int(shots), problems


@bp.route("/mmlu-pro/run", methods=["GET", "POST"])
def page():
    source = request.form if request.method == "POST" else request.args
    data = dataset()
    category, index, shots, problems = _chosen(source, data)
    result = reasoning = failure = None
    try:
        if request.method == "POST":
            live_form.check_post(request.form.get("category", "").replace("-", " ") == category,
                                 "The form arrived without a known category; choose one and press Score.",
                                 "category", "Score")
        if problems:
            raise ScoreFailed(400, problems[0].message, problems=tuple(problems))
        if request.method == "POST":
            if request.form.get("mode") == "cot":
                reasoning = written_answer(category, index, shots)
            else:
                result = score_question(category, index, shots)
    except ScoreFailed as error:
        failure = error
    document = current_app.extensions["documents"][DOCUMENT]
    question = None if index is None else data.in_category(category)[index]
    context = {"result": result, "failure": failure, "errors": failure.on_form(CONTROLS) if failure else None,
               "scored": request.method == "POST", "category": category, "index": index, "shots": shots,
               "question": question, "letters": LETTERS, "cot_tokens": DEFAULT_COT_TOKENS, "status": service().status(),
               # Printed in place of a live result, which a printed page cannot run.
               "example": None if question is None or result else published_answer(question)}

    def whole_page():
        return render_template(f"{DOCUMENT}/server/run-page.html", document=document, categories=data.categories,
                               sizes=data.category_sizes("test"), reasoning=reasoning, **context,
                               styles=[url_for("static", filename="css/widgets.css"),
                                       url_for("static", filename="css/live-form.css"),
                                       asset_url(document, "question-browser.css")],
                               script=asset_url(document, "question-browser.js"))

    # The script's POST gets the results panel; its GET ("Show this question") the shown question.
    fragment = "run-results.html" if request.method == "POST" else "run-question.html"
    return live_form.answer(f"{DOCUMENT}/server/{fragment}", context, whole_page, failure)
