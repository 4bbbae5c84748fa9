"""Reader-facing pages: the index of annotated papers, each paper, and its glossary."""
from __future__ import annotations

from flask import Blueprint, abort, render_template

from .caching import cached_page
from .content import library
from .widgets import fill_slots, paper_of

bp = Blueprint("pages", __name__)


@bp.get("/")
@cached_page
def index():
    content = library()
    papers = [content.paper(slug) for slug in content.slugs()]
    return render_template("index.html", papers=papers)


@bp.get("/<slug>/")
@cached_page
def paper(slug: str):
    found = library().paper(slug)
    if found is None:
        abort(404, description=f"There is no annotated paper at /{slug}/. The list of papers is on the home page.")
    folder = paper_of(slug)
    return render_template("paper.html", paper=found, fill=lambda html: fill_slots(folder, html))


@bp.get("/<slug>/glossary/")
@cached_page
def glossary(slug: str):
    found = library().glossary_page(slug)
    if found is None:
        abort(404, description=f"There is no annotated paper at /{slug}/, so no glossary for it either.")
    paper, terms, symbols, tips = found
    return render_template("glossary.html", paper=paper, terms=terms, symbols=symbols, tips=tips)
