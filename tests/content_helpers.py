"""Shared by the content tests: papers rendered by the same pipeline and app the site uses
(widgets render inside the page, so rendering needs an application and a request context),
from the real content/ or from the fixture content the pipeline's own tests run on.
One app per content folder serves every test module, so the real paper renders once."""
from __future__ import annotations

from functools import cache
from pathlib import Path

from flask import Flask

from mmlu_explainer import create_app
from mmlu_explainer.content import Paper

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_CONFIG = {"TESTING": True, "CONTENT_DIR": FIXTURES / "content", "DIAGRAMS_DIR": FIXTURES / "diagrams"}


@cache
def real_app() -> Flask:
    return create_app({"TESTING": True})


@cache
def fixture_app() -> Flask:
    return create_app(FIXTURE_CONFIG)


def paper_of(app: Flask, slug: str) -> Paper:
    with app.test_request_context("/"):
        return app.extensions["content"].paper(slug)


def rendered_paper() -> Paper:
    return paper_of(real_app(), "mmlu")


def fixture_paper() -> Paper:
    return paper_of(fixture_app(), "demo")
