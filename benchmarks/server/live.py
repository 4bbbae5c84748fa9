"""The one way a route puts work on the app's model: for the request's client (its fair share of
the queue), cancelled when that client leaves, with the service's refusals turned into the answers
every page gives (:class:`ScoreFailed`).

``score`` queues one question and waits for its result; ``generation`` starts a stream of text and
``written`` reads one to its end. A prompt that does not fit the model is a 400 on the field the
caller names, in the caller's words when it has them.
"""
from __future__ import annotations

from collections.abc import Iterator

from flask import request

from engine.security import client_key
from livescoring.scorer import Generation, PromptTooLong
from livescoring.worker import Preempted, ServerStopping

from . import multiple_choice, service
from .failures import SERVICE_ERRORS, Problem, ScoreFailed, service_failure


def _requester() -> dict:
    # The client's address keys its fair share (through nginx, TRUSTED_PROXIES makes it the reader's;
    # an IPv6 client is its /64); waitress tells whether the client has gone, so its work stops
    # between forward passes.
    return {"client": client_key(request.remote_addr), "gone": request.environ.get("waitress.client_disconnected")}


def _too_long(error: PromptTooLong, field: str, words: str | None) -> ScoreFailed:
    return ScoreFailed(400, str(error), problems=(Problem(field, str(error), words or str(error)),))


def score(field: str = "question", words: str | None = None, **arguments) -> dict:
    """One question scored by the app's model (``arguments``: a question as
    benchmarks/server/multiple_choice.py describes it): its prompt fitted with the service's token
    count, its continuations' log-likelihoods from the service's queue, its result read here."""
    model = service()
    try:
        prepared = multiple_choice.prepare(model, arguments)
        answers = model.loglikelihood(prepared.requests, **_requester())
        return multiple_choice.read(prepared, answers, model.model_facts())
    except PromptTooLong as error:
        raise _too_long(error, field, words) from None
    except SERVICE_ERRORS as error:
        raise service_failure(error) from None


def generation(text: str, max_new_tokens: int, stop: tuple[str, ...], field: str = "question",
               shared: str = "") -> Iterator[dict]:
    """A generation's events (one ``{"reading"}`` event with the prompt's token counts, ``{"text"}``
    pieces, then one closing event), started now: a refusal (queue full, prompt too long) is raised
    here, before any text. ``shared``: the prompt's leading text that the benchmark's other prompts
    share (header and worked examples), read from the model's prefix cache."""
    try:
        return service().generate_until(Generation(text, tuple(stop), max_new_tokens, shared), **_requester())
    except PromptTooLong as error:
        raise _too_long(error, field, None) from None
    except SERVICE_ERRORS as error:
        raise service_failure(error) from None


def read_ahead(text: str, shared: str = "") -> None:
    """Have the model read a prompt the reader will likely ask for next, in the background (with a
    model server only; see ScoringService.read_ahead): nothing waits for it, nothing is refused."""
    service().read_ahead(text, shared)


def written(events: Iterator[dict]) -> tuple[str, dict]:
    """A generation read to its end, for a page without JavaScript: (the text, its closing event).
    The reader leaving, or the server stopping, midway is the service's answer for it."""
    text, last = "", {}
    try:
        for event in events:
            if "text" in event:
                text += event["text"]
            else:
                last = event
    except SERVICE_ERRORS as error:
        raise service_failure(error) from None
    return text, last


def cut_short(error: Exception) -> str:
    """Why a stream that had begun ended early, in words that follow "stopped because" (another
    reader let in, the server stopping, the answer stalling, or a failure on the server)."""
    if isinstance(error, Preempted):
        return ("another reader was waiting for the model and this answer had been writing longest, so it made way "
                f"for them; ask again in about {error.retry_after} s")
    if isinstance(error, ServerStopping):
        return "the server is stopping; ask again in a minute"
    if isinstance(error, SERVICE_ERRORS):
        return "the answer stalled on a busy server; try again"
    return "something failed on the server"
