"""Shared by the content tests: documents rendered by the same pipeline and app the site uses,
from the real content/ or from the fixture document the pipeline's own tests run on
(tests/fixtures/content/demo, a document folder with its own widget). One app per content folder
serves every test module, so the real documents render once."""
from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

from flask import Flask

from engine import create_app
from engine.content import RenderedDocument

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_CONFIG = {"TESTING": True, "CONTENT_DIR": FIXTURES / "content"}


@cache
def real_app() -> Flask:
    return create_app({"TESTING": True})


@cache
def fixture_app() -> Flask:
    return create_app(FIXTURE_CONFIG)


def rendered_document(app: Flask, slug: str) -> RenderedDocument:
    return app.extensions["content"].document(slug)  # content renders without a request


def fixture_document() -> RenderedDocument:
    return rendered_document(fixture_app(), "demo")


def summary_of(page: str) -> list[str]:
    """The sentences of a rendered widget's text summary, unescaped."""
    block = re.search(r'<figcaption class="widget-summary"[^>]*>(.*?)</figcaption>', page, re.S).group(1)
    return [html.unescape(p) for p in re.findall(r"<p>(.*?)</p>", block, re.S)]


def messages_of(page: str) -> list[str]:
    """The messages a rendered widget shows about its settings, unescaped."""
    block = re.search(r'<div class="widget-messages"[^>]*>(.*?)</div>', page, re.S).group(1)
    return [html.unescape(m) for m in re.findall(r"<li>(.*?)</li>", block, re.S)]
