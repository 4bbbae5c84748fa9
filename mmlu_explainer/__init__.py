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

    from . import caching, errors, pages, security

    errors.init_app(app)
    security.init_app(app)
    caching.init_app(app)  # registered after security: runs first, so 304s get security headers too
    app.register_blueprint(pages.bp)
    return app
