"""Live scoring: a real language model answers multiple-choice questions the reference way.

Dataset-agnostic: a question with K options and a prompt format come in, letter probabilities
(or full-option log-likelihoods) go out. model.py finds and loads the model (the packaged SmolLM2
by default), scorer.py scores one question, worker.py owns the model in one thread behind a
bounded queue, routes.py serves the model's state. A paper that scores its questions calls
:func:`init_app` from its server hooks and serves its own question routes.
"""
from __future__ import annotations

from flask import Flask, current_app

from .model import ModelSettings
from .worker import ScoringService

__all__ = ["init_app", "service"]


def init_app(app: Flask) -> ScoringService:
    """The one scoring service of this app (made on the first call) and the model routes."""
    if "scoring" in app.extensions:
        return app.extensions["scoring"]
    from . import routes

    scoring = ScoringService(
        ModelSettings.from_config(app.config),
        queue_size=app.config["SCORER_QUEUE_SIZE"],
        timeout_s=app.config["SCORER_TIMEOUT_S"],
    )
    app.extensions["scoring"] = scoring
    app.register_blueprint(routes.bp)
    if app.config["SCORER_LOAD_AT_START"]:
        scoring.start()
    return scoring


def service() -> ScoringService:
    return current_app.extensions["scoring"]
