"""The server side of a live, model-backed form, the same for every document's (each benchmark's
"run it yourself" page, a lesson's widget that scores one question several ways): what a POST must
carry before it may start the model, and the two ways its answer comes back.

Without JavaScript the form posts and gets the whole page, with the result or the problems beside
their fields, under the real status. With JavaScript (static/js/widgets/live-form.js) the same POST
carries ``?fragment=1`` and gets only the results panel, always as a 200 (a reader's typo is then no
console error): the panel carries the real status, model state and Retry-After as data attributes
(benchmarks/server/live-results.html). A page may answer a GET the same way (a question browser's
"Show this question": the shown question alone). The route functions are the documents' own. A form
numbers questions from 1, as a reader counts; the APIs' ``index`` counts from 0 (:func:`question_index`).
"""
from __future__ import annotations

from collections.abc import Callable

from flask import render_template, request

from engine.security import CSRF_FIELD, csrf_token_valid, require_same_origin

from .failures import ScoreFailed


def question_index(number: str):
    """The API's index for a typed question number; anything but a whole number is passed on as
    typed, so the checks name it."""
    number = number.strip()
    return int(number) - 1 if number.isascii() and number.isdigit() else number


def fragment_wanted() -> bool:
    """Whether the script asked for the results panel alone."""
    return request.args.get("fragment") == "1"


def check_post(known: bool, missing: str, field: str, button: str) -> None:
    """A POST that may start the model: sent from this site's page, one of its forms (``known``:
    the form's own field came; else ``missing`` names ``field``), with a valid form token. A stale
    token is a 400 whose words say how to send it again (pressing ``button``)."""
    require_same_origin()
    if not known:  # a bare POST (not our form) must not start the model
        raise ScoreFailed(400, missing, field=field)
    if not csrf_token_valid(request.form.get(CSRF_FIELD)):
        # The whole page comes back with a fresh token; the script's panel does not carry one.
        again = f"reload the page, then press {button}" if fragment_wanted() else f"it has been refreshed: press {button} again"
        raise ScoreFailed(400, f"This form has expired (or was not sent from this site); {again}.", field="form")


def answer(fragment: str, context: dict, whole_page: Callable[[], str], failure: ScoreFailed | None):
    """The results panel alone (``fragment``, rendered with ``context``) for the script, as a 200;
    else the whole page under the failure's status and headers."""
    if fragment_wanted():
        return render_template(fragment, **context)
    return whole_page(), (failure.status if failure else 200), (failure.headers if failure else {})
