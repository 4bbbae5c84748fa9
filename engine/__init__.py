"""The engine for annotated papers and lessons: a Flask application factory.

It is document-agnostic: every document is a folder under CONTENT_DIR (see documents.py), and the engine
registers one blueprint per job for all of them.
"""
from __future__ import annotations

from flask import Flask
from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader

from .config import REPO_ROOT, default_config
from .documents import load_documents


def create_app(overrides: dict | None = None) -> Flask:
    """Build the application: configuration, the documents, then one blueprint per job."""
    app = Flask(
        __name__,
        template_folder=str(REPO_ROOT / "templates"),
        static_folder=str(REPO_ROOT / "static"),
    )
    app.config.update(default_config())
    if overrides:
        app.config.update(overrides)
    documents = load_documents(app.config["CONTENT_DIR"])
    app.extensions["documents"] = documents
    # Site templates by name; a document's own templates as "<slug>/<path in its folder>". A package a
    # document's hooks set up may add its own, as a blueprint's templates (caching.template_folders).
    app.jinja_loader = ChoiceLoader([
        FileSystemLoader(app.template_folder),
        PrefixLoader({slug: FileSystemLoader(str(document.folder)) for slug, document in documents.items()}),
    ])

    from . import api, caching, content, errors, offline, pages, security, site_packages, vendor, widgets

    @app.context_processor
    def site_documents():
        # static_export: set while engine/export.py writes the site as files (templates mark <html>).
        return {"site_documents": list(documents.values()), "static_export": app.config.get("STATIC_EXPORT")}

    caching.init_app(app)  # first: the others index files and add page finishers to its caches
    errors.init_app(app)
    security.init_app(app)
    caching.register_after(app)  # registered after security: runs first, so 304s get security headers too
    content.init_app(app)  # the documents: Markdown content rendered (at start-up in production)
    app.register_blueprint(pages.bp)
    widgets.init_app(app)  # interactive widgets of every document: pages, /embed/, /oembed, widget JSON
    api.init_app(app)  # the math core: JSON API, Pyodide's files, the browser's Python wheel
    vendor.init_app(app)  # the snippet editor's CodeMirror, ES modules from node_modules
    for document in documents.values():  # a document's own routes and data (e.g. the benchmarks it scores)
        if document.hooks.init_app:
            document.hooks.init_app(app, document)
    # After the documents' hooks: the site's version digests every template folder, those their
    # packages register among them.
    offline.init_app(app)  # the service worker and the manifest: reading offline, installing
    site_packages.init_app(app)  # the widgets' packages for teachers, built once per version, sent as files
    if app.config["PAGE_TURNS"] > 0:  # outermost: a page waits for its turn before any work is done for it
        from .turns import PageTurns

        app.wsgi_app = PageTurns(app.wsgi_app, app.config["PAGE_TURNS"])
    return app


def warm_up(app: Flask, base_url: str = "http://localhost/") -> list[str]:
    """Do once, before the first reader arrives, what that reader would otherwise wait for: each
    document's widget data (the live model's published runs are summarised then, about 2 s) and its
    page, plain and with ?sources=on (the variants its view reads), kept for readers who reach the
    site at ``base_url`` (the address the server listens on). Returns a line per page fetched,
    for the server's log."""
    client = app.test_client()
    said = []
    slugs = app.extensions["documents"]
    for path in ("/", *(f"/{slug}/{query}" for slug in slugs for query in ("", "?sources=on"))):
        # The server's own renders: charged to no reader's render budget.
        status = client.get(path, base_url=base_url, environ_base={"REMOTE_ADDR": "warm-up"}).status_code
        said.append(f"{path} {status}")
    return said
