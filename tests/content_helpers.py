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
from engine.content import RenderedDocument as Paper

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_CONFIG = {"TESTING": True, "CONTENT_DIR": FIXTURES / "content"}


@cache
def real_app() -> Flask:
    return create_app({"TESTING": True})


@cache
def fixture_app() -> Flask:
    return create_app(FIXTURE_CONFIG)


def paper_of(app: Flask, slug: str) -> Paper:
    return app.extensions["content"].paper(slug)  # content renders without a request


def rendered_paper() -> Paper:
    return paper_of(real_app(), "mmlu")


def fixture_paper() -> Paper:
    return paper_of(fixture_app(), "demo")


def summary_of(page: str) -> list[str]:
    """The sentences of a rendered widget's text summary, unescaped."""
    block = re.search(r'<figcaption class="widget-summary"[^>]*>(.*?)</figcaption>', page, re.S).group(1)
    return [html.unescape(p) for p in re.findall(r"<p>(.*?)</p>", block, re.S)]


def messages_of(page: str) -> list[str]:
    """The messages a rendered widget shows about its settings, unescaped."""
    block = re.search(r'<div class="widget-messages"[^>]*>(.*?)</div>', page, re.S).group(1)
    return [html.unescape(m) for m in re.findall(r"<li>(.*?)</li>", block, re.S)]
