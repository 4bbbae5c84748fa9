"""``/scoring-lesson/three-scorers``: one real MMLU question, scored the ways the harness's tasks do.

Letter log-likelihood (the original code and the harness's ``mmlu``) and full-answer continuation
(``mmlu_continuation``), summed and per token, through the live model: the MMLU paper's
``run_score`` does the validation and the queueing, so errors are the same 4xx/5xx as
``POST /api/score``. Generation with a parser (``mmlu_generative``) and the chat-template variants
need a generating model service, which this version does not have; the page says so.
GET shows the form; POST (a plain form, so it works without JavaScript) scores and shows the
prompts and the decisions side by side.
"""
from __future__ import annotations

from flask import Blueprint, current_app, render_template, request

from engine.security import form_token_valid, require_same_origin

bp = Blueprint("scoring_lesson_scorers", __name__)
DEFAULT = {"subject": "astronomy", "index": "0", "shots": "0"}


def per_token(option: dict) -> float:
    """Length-normalised log-likelihood: the option's summed log-probability over its token count."""
    return option["logprob"] / option["tokens"]


def decisions(letter: dict, option: dict) -> list[dict]:
    """The three decisions with what each compared: [{"name", "task", "prompt", "rows", "prediction"}]."""
    normalised = {o["letter"]: per_token(o) for o in option["options"]}
    return [
        {"name": "Letter log-likelihood", "task": "mmlu (and the original code)", "prompt": letter["prompt"]["text"],
         "rows": [(o["letter"], o["continuation"], o["tokens"], o["logprob"]) for o in letter["options"]],
         "prediction": letter["prediction"]},
        {"name": "Full answer, summed", "task": "mmlu_continuation (acc)", "prompt": option["prompt"]["text"],
         "rows": [(o["letter"], o["continuation"], o["tokens"], o["logprob"]) for o in option["options"]],
         "prediction": option["prediction"]},
        {"name": "Full answer, per token", "task": "mmlu_continuation (length-normalised)",
         "prompt": option["prompt"]["text"],
         "rows": [(o["letter"], o["continuation"], o["tokens"], normalised[o["letter"]]) for o in option["options"]],
         "prediction": max(normalised, key=normalised.get)},  # ties: the first letter, as pick_option
    ]


@bp.route("/scoring-lesson/three-scorers", methods=["GET", "POST"])
def three_scorers_page():
    from livescoring.failures import ScoreFailed
    from papers.mmlu.server.run import run_score

    subjects = sorted(current_app.extensions["mmlu_data"].subjects)
    values = {key: request.form.get(key, default) for key, default in DEFAULT.items()}
    found, error, status, key = None, None, 200, None
    if request.method == "POST":
        require_same_origin()  # a page of another site may not spend this server's model
    if request.method == "POST" and not all(request.form.get(key) for key in DEFAULT):
        error, status = "fill in the subject, the question number and the number of worked examples", 400
    elif request.method == "POST" and not form_token_valid():
        error, status = "this form has expired (or was not sent from this site); it has been refreshed: press Score again", 400
    elif request.method == "POST":
        body = {"subject": values["subject"], "split": "test", "index": values["index"], "shots": values["shots"]}
        try:
            letter = run_score({**body, "method": "letter"})
            option = run_score({**body, "method": "option"})
            found, key = decisions(letter, option), letter["key"]
        except ScoreFailed as failure:
            error, status = failure.message, failure.status
    return render_template("scoring-lesson/server/three-scorers-page.html", subjects=subjects, values=values,
                           found=found, key=key, error=error), status
