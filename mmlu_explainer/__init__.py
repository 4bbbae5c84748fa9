"""The annotated-paper explainer: a Flask application factory."""
from __future__ import annotations

from flask import Flask

from .config import REPO_ROOT, default_config
from .data import MMLUData


def create_app(overrides: dict | None = None) -> Flask:
    """Build the application: configuration first, then one blueprint per job."""
    app = Flask(
        __name__,
        template_folder=str(REPO_ROOT / "templates"),
        static_folder=str(REPO_ROOT / "static"),
    )
    app.config.update(default_config())
    if overrides:
        app.config.update(overrides)
    app.extensions["mmlu_data"] = MMLUData(app.config["MMLU_DATA_DIR"])

    from . import api, caching, content, errors, pages, scoring, security, widgets

    errors.init_app(app)
    security.init_app(app)
    caching.init_app(app)  # registered after security: runs first, so 304s get security headers too
    content.init_app(app)  # annotated papers: Markdown content rendered and cached
    app.register_blueprint(pages.bp)
    app.register_blueprint(widgets.bp)  # interactive widgets: pages, /embed/, /oembed
    api.init_app(app)  # the math core: JSON API, Pyodide's files, the explainers wheel
    scoring.init_app(app)  # live scoring: a real model answers questions; /api/score, /mmlu/run
    return app
