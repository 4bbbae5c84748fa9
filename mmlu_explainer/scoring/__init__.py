"""Live scoring: a real language model answers MMLU questions the paper's way.

model.py finds and loads the model (the packaged SmolLM2 by default), scorer.py scores one
question (letter probabilities or full-option log-likelihood), worker.py owns the model in one
thread behind a bounded queue, validation.py and form.py read requests, routes.py serves the API
and the "Run it yourself" page.
"""
from __future__ import annotations

from flask import Flask

from .form import widget_context
from .model import ModelSettings
from .worker import ScoringService

__all__ = ["init_app", "widget_context"]


def init_app(app: Flask) -> None:
    """Create the one scoring service for this app and register the routes."""
    from . import routes

    service = ScoringService(
        ModelSettings.from_config(app.config),
        queue_size=app.config["SCORER_QUEUE_SIZE"],
        timeout_s=app.config["SCORER_TIMEOUT_S"],
    )
    app.extensions["scoring"] = service
    app.register_blueprint(routes.bp)
    if app.config["SCORER_LOAD_AT_START"]:
        service.start()
