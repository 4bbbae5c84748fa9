"""Reader-facing pages: the index of documents, each document, and its glossary."""
from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from .caching import cached_page
from .content import library
from .numbers import QUERY_VALUES, with_number_sources, works_named
from .widgets import document_of, fill_slots

bp = Blueprint("pages", __name__)


@bp.get("/")
@cached_page
def index():
    content = library()
    documents = [content.document(slug) for slug in content.slugs()]
    return render_template("index.html", documents=documents)


@bp.get("/<slug>/")
@cached_page(choices={"sources": ("off", "on")})  # QUERY_VALUES's keys, the default (absent) first
def document(slug: str):
    found = library().document(slug)
    if found is None:
        abort(404, description=f"There is no document at /{slug}/. The list of documents is on the home page.")
    shown = request.args.get("sources", "off")
    if shown not in QUERY_VALUES:
        abort(400, description="'sources' is 'on' (show where each number comes from) or 'off'.")
    folder = document_of(slug)
    page = render_template("document.html", document=found, fill=lambda html: fill_slots(folder, html),
                           widget_title=lambda name: folder.widgets[name].title, number_sources=QUERY_VALUES[shown])
    return with_number_sources(page, library().numbers(slug), works_named(found.meta)) if QUERY_VALUES[shown] else page



@bp.get("/<slug>/glossary/")
@cached_page
def glossary(slug: str):
    found = library().glossary_page(slug)
    if found is None:
        abort(404, description=f"There is no document at /{slug}/, so no glossary for it either.")
    document, terms, symbols, tips = found
    return render_template("glossary.html", document=document, terms=terms, symbols=symbols, tips=tips)
