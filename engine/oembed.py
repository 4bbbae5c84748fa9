"""oEmbed 1.0 for the widgets' page and embed addresses: ``/oembed?url=<widget URL>`` answers
{"type": "rich", "html": "<iframe …>"}, the snippet a consumer (a blog, a course platform) pastes.

It reads the widgets blueprint's documents and snippets (widgets.py) and adds nothing to them.
"""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from flask import Blueprint, abort, jsonify, request, url_for
from werkzeug.datastructures import MultiDict

from widgetkit import Widget

from .documents import Document
from .widgets import documents, raw_state, share_links, view_of

bp = Blueprint("oembed", __name__)


def _slug_and_name(path: str) -> tuple[str, str] | None:
    """(document, widget) of /<document>/widgets/<name>, /embed/<document>/<name> or the older /embed/<name>."""
    segments = path.strip("/").split("/")
    if len(segments) == 3 and segments[1] == "widgets":
        return segments[0], segments[2]
    if len(segments) == 3 and segments[0] == "embed":
        return segments[1], segments[2]
    if len(segments) == 2 and segments[0] == "embed":
        return next(((slug, segments[1]) for slug, p in documents().items() if segments[1] in p.widgets), None)
    return None


def _example_url() -> str:
    """A real widget page of this site, for error messages."""
    for document in documents().values():
        for name in document.widgets:
            return url_for("widgets.page", slug=document.slug, name=name, _external=True)
    return request.host_url


def _widget_from_url(url: str) -> tuple[Document, Widget, str]:
    """The widget a page or embed URL of this site shows, and the URL's query."""
    parts = urlsplit(url)
    example = _example_url()
    if parts.scheme not in ("http", "https") or parts.netloc != urlsplit(request.host_url).netloc:
        abort(404, description=f"url must be a widget page of this site, e.g. {example}")
    found = _slug_and_name(parts.path)
    document = documents().get(found[0]) if found else None
    if document is None or found[1] not in document.widgets:
        abort(404, description=f"{parts.path} is not a widget URL; widget URLs look like {example}.")
    return document, document.widgets[found[1]], parts.query


def _pixels(key: str, largest: int) -> int:
    raw = request.args.get(key)
    if raw is None:
        return largest
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        abort(400, description=f"{key} must be a positive whole number of pixels, got {raw[:20]!r}")
    return min(largest, int(raw))


@bp.get("/oembed")
def oembed():
    """oEmbed 1.0 for widget URLs: {"type": "rich", "html": "<iframe …>"}; JSON only."""
    url = request.args.get("url", "")
    if not url:
        abort(400, description="url is required: the address of a widget page, e.g. /oembed?url=…&format=json")
    if request.args.get("format", "json") != "json":
        abort(400, description="format must be json (the only oEmbed format offered here)")
    document, widget, query = _widget_from_url(url)
    clean = "" if widget.driver == "live" else view_of(document, widget, raw_state(MultiDict(parse_qsl(query))))["query"]
    # The frame starts at the widget's usual height (at most maxheight) and the resize script in
    # the html makes it as tall as the widget is at the width it is shown at, never taller than
    # maxheight when one is asked for: past it, the frame scrolls. A consumer that strips scripts
    # keeps the frame at its first height, with its own scroll bar, nothing cut off for good.
    max_height = _pixels("maxheight", 5000) if request.args.get("maxheight") is not None else None
    width, height = _pixels("maxwidth", 640), min(widget.height, max_height or widget.height)
    links = share_links(document, widget, clean, width=str(width), height=height, max_height=max_height)
    return jsonify(
        version="1.0", type="rich", title=widget.title, provider_name="Annotated papers",
        provider_url=request.host_url, html=f"{links['iframe']}\n{links['script']}", width=width, height=height,
        cache_age=86400,
    )
