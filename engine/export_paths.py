"""Addresses in the static export's files (engine/export.py): the file that answers an address on a
static host (``file_for``), the addresses a written file names (``references``), and each made
relative to the file naming it (``rewrite``), so the folder works under any base path.
"""
from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from urllib.parse import quote, urlsplit

from flask import Flask
from werkzeug.exceptions import HTTPException

# The origin the test client renders absolute URLs for; rewritten away in every file.
FREEZE_ORIGIN = "http://export.invalid"
# Pages whose settings are their query: the page's script reads it, so the query stays in links.
QUERY_READING = {"widgets.page", "widgets.embed"}
# An address in an HTML attribute (data-*: a script's address, a widget's files).
_ATTRIBUTE = re.compile(r"""(\s(?:href|src|action|poster|data-[a-z-]+)=")([^"]*)(")""")
# A module's root-relative import (the snippet editor's CodeMirror, a widget's script importing the site's).
_ROOT_IMPORT = re.compile(r"""(\b(?:from|import)\s*\(?\s*)(["'])(/[^"'\s/][^"'\s]*)\2""")
_ORIGIN_URL = re.compile(re.escape(FREEZE_ORIGIN) + r"""(/[^\s"'<>\\&]*)""")


def file_for(app: Flask, url: str) -> str:
    """The file (relative to the folder) that answers a root-relative ``url`` on a static host:
    ``/x/`` is ``x/index.html``; a page without a suffix gets ``.html``, since static hosts choose
    the content type by the suffix (the JSON under /api/ keeps its address: its reader's ``fetch``
    reads it whatever its type); a query is dropped, except a page's own variant (``/<document>/?sources=on``
    is ``<document>/index.sources-on.html``)."""
    parts = urlsplit(url)
    path = parts.path
    if path.endswith("/"):
        stem, suffix = path + "index", ".html"
    elif path.startswith("/api/") or "." in path.rsplit("/", 1)[-1]:
        return path.lstrip("/")
    else:
        stem, suffix = path, ".html"
    if parts.query and suffix == ".html" and endpoint_of(app, path) not in QUERY_READING:
        stem += "." + re.sub(r"[^a-z0-9]+", "-", parts.query.lower()).strip("-")
    return stem.lstrip("/") + suffix


def endpoint_of(app: Flask, path: str) -> str | None:
    try:
        endpoint, _ = app.url_map.bind("export.invalid").match(path, method="GET")
    except HTTPException:
        return None
    return endpoint


def references(source_file: str, text: str) -> list[str]:
    """The addresses a file names that the static host must answer: root-relative or on the freeze origin."""
    suffix = PurePosixPath(source_file).suffix
    if suffix == ".html":
        found = [match.group(2) for match in _ATTRIBUTE.finditer(text)]
    elif suffix == ".js":
        found = [match.group(3) for match in _ROOT_IMPORT.finditer(text)]
    elif source_file.startswith("api/"):  # the runtime's index (Pyodide's own JSON names no address)
        found = [value for value in _strings(json.loads(text)) if not value.endswith("/")]  # not Pyodide's folder
    else:
        found = []
    internal = []
    for raw in found:
        url = raw.replace("&amp;", "&")
        if url.startswith(FREEZE_ORIGIN + "/"):
            url = url[len(FREEZE_ORIGIN):]
        if url.startswith("/") and not url.startswith("//"):
            internal.append(url.split("#")[0])
    return internal


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def relative(app: Flask, source_file: str, url: str) -> str:
    """``url`` (root-relative) as named from ``source_file``: a relative path to its file, with the
    query kept where the page reads it and the fragment kept always."""
    parts = urlsplit(url)
    target = file_for(app, url)
    start = PurePosixPath(source_file).parent
    path = str(PurePosixPath(*([".."] * len(start.parts)), target)) if start.parts else target
    if path.endswith("index.html") and (path == "index.html" or path.endswith("/index.html")):
        path = path[: -len("index.html")] or "./"  # a folder's address, as a reader would type it
    keep_query = parts.query and endpoint_of(app, parts.path) in QUERY_READING
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    return quote(path, safe="/.-_~@") + (f"?{parts.query}" if keep_query else "") + fragment


def rewrite(app: Flask, source_file: str, text: str, base_url: str | None) -> str:
    """Every internal address in a written file made relative to it; the freeze origin anywhere
    else (text a reader copies: a share box's snippet) becomes ``base_url``."""
    suffix = PurePosixPath(source_file).suffix

    def internal(url: str) -> str | None:
        plain = url.replace("&amp;", "&")
        if plain.startswith(FREEZE_ORIGIN + "/"):
            plain = plain[len(FREEZE_ORIGIN):]
        if not plain.startswith("/") or plain.startswith("//"):
            return None
        return relative(app, source_file, plain).replace("&", "&amp;" if suffix == ".html" else "&")

    if suffix == ".html":
        text = _ATTRIBUTE.sub(lambda m: m.group(1) + (internal(m.group(2)) or m.group(2)) + m.group(3), text)
    elif suffix == ".js":
        text = _ROOT_IMPORT.sub(lambda m: m.group(1) + m.group(2) + internal(m.group(3)) + m.group(2), text)
    elif source_file.startswith("api/"):
        data = json.loads(text)
        def addresses(value):
            if isinstance(value, list):
                return [addresses(item) for item in value]
            return internal(value) or value if isinstance(value, str) else value

        data = {key: addresses(value) for key, value in data.items()}
        text = json.dumps(data, sort_keys=True)
    # What is left names the origin in text a reader copies (a share box's link and snippet): the
    # export's own address, else the path from this file (the page's script puts its address there).
    def absolute(match: re.Match) -> str:
        url = match.group(1)
        parts = urlsplit(url)
        target = file_for(app, url).removesuffix("index.html") + (f"?{parts.query}" if parts.query else "")
        return base_url + target if base_url else relative(app, source_file, url)

    return _ORIGIN_URL.sub(absolute, text)
