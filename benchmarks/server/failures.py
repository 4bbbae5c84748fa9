"""How a request to score or generate ends in an error response, for every paper's routes and forms.

The model service raises its own exceptions (queue full, still loading, unavailable, too slow);
:func:`service_failure` turns each into the one HTTP answer every paper gives for it. A request's
own mistakes are :class:`Problem` s: each names the field as the JSON API does (for programs) and
says the same in the words of the page's form (for readers), so a form can show each one beside
its field.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from flask import jsonify

from livescoring.client import BackendUnsuitable, ModelServerError
from livescoring.model import ModelUnavailable
from livescoring.worker import Preempted, QueueFull, ScoringTimeout, StillLoading

log = logging.getLogger(__name__)

SERVICE_ERRORS = (QueueFull, StillLoading, ModelUnavailable, ScoringTimeout, ModelServerError)


@dataclass(frozen=True)
class Problem:
    """One mistake in a request: ``field`` and ``message`` as the JSON API gives them ("choices[0] (A)
    is empty"), ``words`` as a reader of the form reads them ("Option A is empty: …")."""

    field: str
    message: str
    words: str


@dataclass(frozen=True)
class FormErrors:
    """A failure laid out for a form: every problem in order, with the id of the control it belongs
    to (None when no control does, e.g. an expired form); ``by_control`` for the fields themselves;
    ``first`` is the control that gets the focus."""

    listed: tuple[tuple[str | None, str], ...]
    by_control: dict[str, str]
    first: str | None


class ScoreFailed(Exception):
    """A request that ends in an error response: status, message, field, extra headers, model state,
    and the problems in the request (a ``field`` alone is one problem worded by ``message``)."""

    def __init__(self, status: int, message: str, field: str | None = None, headers: dict | None = None,
                 state: str | None = None, problems: tuple[Problem, ...] = ()):
        super().__init__(message)
        problems = tuple(problems) or ((Problem(field, message, message),) if field else ())
        self.status, self.message, self.headers, self.state = status, message, headers or {}, state
        self.problems = problems
        self.field = field or (problems[0].field if problems else None)

    def response(self):
        """The JSON answer: {"error", "status"} and, where known, the field to fix (with every
        problem when there are several) and the model's state."""
        payload = {"error": self.message, "status": self.status}
        if self.field:
            payload["field"] = self.field
        if len(self.problems) > 1:
            payload["problems"] = [{"field": p.field, "error": p.message} for p in self.problems]
        if self.state:
            payload["state"] = self.state
        return jsonify(payload), self.status, self.headers

    def on_form(self, controls: dict[str, str]) -> FormErrors:
        """The problems placed on a form whose ``controls`` map API field names to control ids."""
        listed = tuple((controls.get(p.field), p.words) for p in self.problems) or ((None, self.message),)
        by_control: dict[str, str] = {}
        for control, words in listed:
            if control:
                by_control.setdefault(control, words)
        return FormErrors(listed, by_control, next(iter(by_control), None))


def service_failure(error: Exception) -> ScoreFailed:
    """The answer for one of SERVICE_ERRORS."""
    if isinstance(error, QueueFull):
        return ScoreFailed(429, str(error), headers={"Retry-After": str(error.retry_after)})
    if isinstance(error, StillLoading):
        return ScoreFailed(503, f"{error} Try again in a few seconds.", headers={"Retry-After": "5"}, state="loading")
    if isinstance(error, Preempted):  # stopped to let another reader in: the model is busy, not slow
        return ScoreFailed(503, str(error), headers={"Retry-After": str(error.retry_after)})
    if isinstance(error, ModelUnavailable):
        return ScoreFailed(503, f"Live scoring is unavailable: {error}", state="failed")
    if isinstance(error, BackendUnsuitable):
        return ScoreFailed(503, f"Live scoring is unavailable: the model server cannot score questions: {error}",
                           state="failed")
    if isinstance(error, ModelServerError):
        return _model_server_failure(error)
    return ScoreFailed(504, str(error))


def _model_server_failure(error: ModelServerError) -> ScoreFailed:
    """The model server's own refusals: its queue full (429, its wait), or the server down,
    restarting or failing (503: the site's pages still answer; try again shortly)."""
    if error.status == 429:
        return ScoreFailed(429, f"The model is busy: {error}", headers={"Retry-After": str(error.retry_after or 5)})
    if error.status == 504:
        return ScoreFailed(504, str(error))
    # Its address and the socket's error stay in the log: a reader needs only what to do.
    log.warning("model server: %s", error)
    return ScoreFailed(503, "The model is restarting or cannot be reached just now; try again in a few seconds.",
                       headers={"Retry-After": str(error.retry_after or 5)}, state="loading")
