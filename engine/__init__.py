"""The engine for annotated papers: a Flask application factory.

It is paper-agnostic: every paper is a folder under PAPERS_DIR (see papers.py), and the engine
registers one blueprint per job for all of them.
"""
from __future__ import annotations

from flask import Flask
from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader

from .config import REPO_ROOT, default_config
from .papers import load_papers


def create_app(overrides: dict | None = None) -> Flask:
    """Build the application: configuration, the papers, then one blueprint per job."""
    app = Flask(
        __name__,
        template_folder=str(REPO_ROOT / "templates"),
        static_folder=str(REPO_ROOT / "static"),
    )
    app.config.update(default_config())
    if overrides:
        app.config.update(overrides)
    papers = load_papers(app.config["PAPERS_DIR"])
    app.extensions["papers"] = papers
    # Site templates by name; a paper's own templates as "<slug>/<path in its folder>".
    app.jinja_loader = ChoiceLoader([
        FileSystemLoader(app.template_folder),
        PrefixLoader({slug: FileSystemLoader(str(paper.folder)) for slug, paper in papers.items()}),
    ])

    from . import api, caching, content, errors, pages, security, widgets

    @app.context_processor
    def site_papers():
        return {"site_papers": list(papers.values())}

    caching.init_app(app)  # first: the others index files and add page finishers to its caches
    errors.init_app(app)
    security.init_app(app)
    caching.register_after(app)  # registered after security: runs first, so 304s get security headers too
    content.init_app(app)  # annotated papers: Markdown content rendered (at start-up in production)
    app.register_blueprint(pages.bp)
    widgets.init_app(app)  # interactive widgets of every paper: pages, /embed/, /oembed, widget JSON
    api.init_app(app)  # the math core: JSON API, Pyodide's files, the browser's Python wheel
    for paper in papers.values():  # a paper's own routes and data (e.g. live scoring of its questions)
        hook = getattr(paper.server, "init_app", None)
        if hook:
            hook(app, paper)
    return app


def warm_up(app: Flask) -> list[str]:
    """Do once, before the first reader arrives, what that reader would otherwise wait for: each
    paper's widget data (the live model's published runs are summarised then, about 2 s) and its
    page with the widgets' first pictures. Returns a line per page fetched, for the server's log."""
    client = app.test_client()
    said = []
    for path in ("/", *(f"/{slug}/" for slug in app.extensions["papers"])):
        status = client.get(path).status_code
        said.append(f"{path} {status}")
    return said
