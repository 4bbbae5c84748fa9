"""The site as static files: ``python -m engine.export OUT [--base-url URL] [--live-server URL]``.

Frozen-Flask (``flask_frozen``) gets each page from the app's test client and writes it to a file;
this module says which pages (``_seeds``: every document, its glossary, widget gallery, widget
pages and embeds, the math-core page, Pyodide's files and the browser wheel), then follows every
address a written file names (HTML attributes, the snippet editor's module imports, the browser
runtime's index) until nothing new is named, and finally rewrites each of those addresses into a
path relative to the file that names it. The folder so made works under any base path (``/``,
``/courses/ml/papers/``) on any host that serves files: Python's ``http.server``, nginx, a bucket.

What a static host cannot do, the pages do not ask for: the app renders them with
``STATIC_EXPORT`` set (templates and scripts read ``data-static-export`` on ``<html>``), so
every widget's change is computed by the Pyodide worker (a widget whose view needs the server's
data keeps its first picture and says the live site changes it), a settings query in a widget's
address is read by the page's script (a static host ignores queries), and a live widget (one
that asks the language model) says it needs the live site, linking to it with ``--live-server``.
oEmbed's JSON, whose answers are absolute addresses, is written only with ``--base-url``.

The export fails loudly (``ExportError``, exit status 1) when a page or a file a page names
does not answer 200, or names an address outside the folder (another route of the server's, a
form posted to it). The same input gives the same bytes: nothing written depends on the clock or
on the order files were fetched in.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote, urlsplit

from flask import Flask, render_template, url_for
from flask_frozen import Freezer, MissingURLGeneratorWarning
from werkzeug.exceptions import HTTPException

from . import create_app
from .packages import MARKER as PACKAGES_MARKER
from .packages import write_packages
from .python_runtime import _FILES as PYODIDE_FILES

# The origin the test client renders absolute URLs for; rewritten away in every file.
FREEZE_ORIGIN = "http://export.invalid"
# Pages whose settings are their query: the page's script reads it, so the query stays in links.
QUERY_READING = {"widgets.page", "widgets.embed"}
# The routes a static host can answer (what they return depends on their address only); a page
# named by the export that is of another route (a live form's page) is written as a note that it is
# on the live site (templates/live_elsewhere_page.html); an /api/ address of another route fails.
STATIC_ENDPOINTS = {
    "pages.index", "pages.document", "pages.glossary", "widgets.gallery", "widgets.page", "widgets.embed",
    "widgets.asset", "static", "vendor.editor_entry", "vendor.vendor_file", "python_runtime.runtime_index",
    "python_runtime.pyodide_file", "python_runtime.wheel_file", "math_core_page.math_core", "explainers_api.index",
    "offline.offline_index", "offline.service_worker", "offline.manifest",
}
# Everything else with a query (a paper with ?sources=on) is a page of its own, written beside.
_ATTRIBUTE = re.compile(r"""(\s(?:href|src|action|poster|data-[a-z-]+)=")([^"]*)(")""")
# A module's root-relative import (the snippet editor's CodeMirror, a widget's script importing the site's).
_ROOT_IMPORT = re.compile(r"""(\b(?:from|import)\s*\(?\s*)(["'])(/[^"'\s/][^"'\s]*)\2""")
_ORIGIN_URL = re.compile(re.escape(FREEZE_ORIGIN) + r"""(/[^\s"'<>\\&]*)""")
TEXT_SUFFIXES = {".html", ".js", ".json", ".css", ""}  # "": the runtime's index under api/


class ExportError(Exception):
    """A page that would 404 on the static host, or that names an address outside the folder."""


@dataclass
class ExportReport:
    folder: Path
    files: int
    bytes: int
    seconds: float

    def line(self) -> str:
        return (f"Exported {self.files} files, {self.bytes / 2**20:.1f} MiB ({self.bytes:,} bytes), "
                f"to {self.folder} in {self.seconds:.1f} s")


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


class _Freezer(Freezer):
    def urlpath_to_filepath(self, path: str) -> str:
        return file_for(self.app, path)


def _seeds(app: Flask) -> list[str]:
    """Every page and runtime file the export starts from (what they name is followed)."""
    urls = [url_for("pages.index"), url_for("math_core_page.math_core")]
    for slug, document in app.extensions["documents"].items():
        urls += [url_for("pages.document", slug=slug), url_for("pages.document", slug=slug, sources="on"),
                 url_for("pages.glossary", slug=slug), url_for("widgets.gallery", slug=slug)]
        for name in document.widgets:
            urls += [url_for("widgets.page", slug=slug, name=name), url_for("widgets.embed", slug=slug, name=name)]
    urls += [url_for("python_runtime.runtime_index"), url_for("offline.offline_index"),
             url_for("offline.service_worker"), url_for("offline.manifest")]
    version = app.extensions["pyodide_version"]
    if version:
        urls += [url_for("python_runtime.pyodide_file", version=version, filename=name) for name in PYODIDE_FILES]
    wheel = app.extensions["browser_wheel"]
    urls.append(url_for("python_runtime.wheel_file", digest=wheel.digest, filename=wheel.filename))
    if app.extensions["vendor_packages"]:
        urls.append(url_for("vendor.editor_entry"))
    return urls


def write_oembed(app: Flask, folder: Path) -> list[str]:
    """Each widget page's oEmbed answer, as a file where its page's <link rel="alternate"> says
    (engine/widgets.py), its addresses on the freeze origin until ``rewrite`` gives them the export's."""
    names = []
    client = app.test_client()
    for slug, document in app.extensions["documents"].items():
        for name in document.widgets:
            with app.test_request_context(base_url=FREEZE_ORIGIN + "/"):
                page = url_for("widgets.page", slug=slug, name=name, _external=True)
            response = client.get("/oembed", query_string={"url": page, "format": "json"}, base_url=FREEZE_ORIGIN + "/")
            if response.status_code != 200:
                raise ExportError(f"oEmbed for {page} answered {response.status}")
            path = f"oembed/{slug}/{name}.json"
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(response.get_data())
            names.append(path)
    return names


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


class _Export:
    """One export: the app rendering for it, the files written, the addresses still to follow."""

    def __init__(self, app: Flask, folder: Path, base_url: str | None, live_server: str | None):
        self.app, self.folder, self.base_url, self.live_server = app, folder, base_url, live_server
        self.queue: list[str] = []  # addresses Frozen-Flask is still to write
        self.seen: set[str] = set()  # files named so far
        self.written: list[str] = []
        self.live_pages: dict[str, str] = {}  # file -> the live site's address it stands for

    def write_document_files(self) -> None:
        """What each document adds (``DocumentHooks.static_files``), under its own folder."""
        for slug, document in self.app.extensions["documents"].items():
            if document.hooks.static_files is None:
                continue
            with self.app.app_context():
                files = document.hooks.static_files(self.app)
            for path, data in sorted(files.items()):
                name = f"{slug}/{path}"
                (self.folder / name).parent.mkdir(parents=True, exist_ok=True)
                (self.folder / name).write_bytes(data)
                self.seen.add(name)

    def add(self, url: str, named_by: str) -> None:
        name = file_for(self.app, url)
        if name in self.seen:
            return
        endpoint = endpoint_of(self.app, urlsplit(url).path)
        if endpoint is None:
            raise ExportError(f"{named_by} names {url}, which is not a page of this site")
        self.seen.add(name)
        if endpoint in STATIC_ENDPOINTS:
            self.queue.append(url)
        elif url.startswith("/api/"):
            raise ExportError(f"{named_by} names {url}, which only the server answers")
        else:
            self.live_pages[name] = url

    def followed(self):
        """Frozen-Flask's generator of addresses, read lazily: pages written so far add what they name."""
        while self.queue:
            url = self.queue.pop(0)
            if file_for(self.app, url) != file_for(self.app, urlsplit(url).path):
                self.write_variant(url)  # a page's variant: Frozen-Flask drops queries
            else:
                yield url

    def write_variant(self, url: str) -> None:
        response = self.app.test_client().get(url, base_url=FREEZE_ORIGIN + "/")
        if response.status_code != 200:
            raise ExportError(f"{url} answered {response.status}")
        name = file_for(self.app, url)
        (self.folder / name).write_bytes(response.get_data())
        self.scan(name)

    def scan(self, name: str) -> None:
        self.written.append(name)
        if PurePosixPath(name).suffix in TEXT_SUFFIXES:
            for url in references(name, (self.folder / name).read_text(encoding="utf-8")):
                self.add(url, name)

    def write_live_pages(self) -> None:
        for name, url in sorted(self.live_pages.items()):
            with self.app.test_request_context(urlsplit(url).path, base_url=FREEZE_ORIGIN + "/"):
                page = render_template("live_elsewhere_page.html", path=url,
                                       live_url=self.live_server and self.live_server.rstrip("/") + url)
            (self.folder / name).parent.mkdir(parents=True, exist_ok=True)
            (self.folder / name).write_text(page, encoding="utf-8")
            self.written.append(name)

    def run(self) -> None:
        # Every file under static/ too (scripts import one another, and the worker, by relative address).
        freezer = _Freezer(self.app, with_static_files=True, with_no_argument_rules=False, log_url_for=False)
        freezer.register_generator(self.followed)
        self.write_document_files()
        with self.app.test_request_context(base_url=FREEZE_ORIGIN + "/"):
            for url in _seeds(self.app):
                self.add(url, "the export's list of pages")
        try:
            with warnings.catch_warnings():
                # It counts the endpoints its generators named; the followed addresses name none.
                warnings.simplefilter("ignore", MissingURLGeneratorWarning)
                for page in freezer.freeze_yield():
                    self.scan(file_for(self.app, page.url))
        except ValueError as error:  # Frozen-Flask's words for a status other than 200
            raise ExportError(str(error)) from error
        self.write_live_pages()
        if self.base_url:
            self.written += write_oembed(self.app, self.folder)
        for name in self.written:
            if PurePosixPath(name).suffix in TEXT_SUFFIXES:
                path = self.folder / name
                path.write_text(rewrite(self.app, name, path.read_text(encoding="utf-8"), self.base_url),
                                encoding="utf-8")
        self.write_packages()

    def write_packages(self) -> None:
        """Each widget's packages (engine/packages.py), from the rewritten files; then the links to
        them in the share boxes, where the pages left their markers."""
        widgets = {slug: [(name, widget.title) for name, widget in document.widgets.items() if widget.driver == "worker"]
                   for slug, document in self.app.extensions["documents"].items()}
        made = write_packages(self.folder, widgets, self.base_url)
        for name in self.written:
            if not name.endswith(".html"):
                continue
            path = self.folder / name
            text = path.read_text(encoding="utf-8")
            if "<!--packages:" not in text:
                continue
            root = "../" * len(PurePosixPath(name).parent.parts)
            for (slug, widget), files in made.items():
                marker = PACKAGES_MARKER.format(slug=slug, name=widget)
                if marker in text:
                    with self.app.app_context():
                        links = render_template("widgets/_packages.html", **{
                            kind: (root + file, size) for kind, (file, size) in files.items()})
                    text = text.replace(marker, links)
            path.write_text(text, encoding="utf-8")


def export(folder: Path, base_url: str | None = None, live_server: str | None = None,
           content_dir: Path | None = None) -> ExportReport:
    """Write the static site into ``folder`` (emptied first); see the module's docstring."""
    started = time.monotonic()
    overrides = {
        "STATIC_EXPORT": {"base_url": base_url, "live_server": live_server},
        "FREEZER_DESTINATION": str(folder),
        "FREEZER_BASE_URL": FREEZE_ORIGIN + "/",
        "FREEZER_REMOVE_EXTRA_FILES": False,  # the folder is emptied first; variants are written beside
        "FREEZER_IGNORE_MIMETYPE_WARNINGS": True,  # the suffixes are chosen by file_for, for the host
        "FREEZER_REDIRECT_POLICY": "error",  # a redirect is a page the static host would not answer
        "PAGE_RENDER_BUDGET_S": 0,
        "SECRET_KEY": "static-export",  # no form the export writes carries a token; fixed all the same
    }
    if content_dir is not None:
        overrides["CONTENT_DIR"] = content_dir
    app = create_app(overrides)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    _Export(app, folder, base_url, live_server).run()
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return ExportReport(folder, len(files), sum(p.stat().st_size for p in files), time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="where to write the site (emptied first)")
    parser.add_argument("--base-url", help="the export's absolute address (https://host/path/): enables oEmbed")
    parser.add_argument("--live-server", help="the live site's address, linked where a page needs it")
    args = parser.parse_args(argv)
    for option, value in (("--base-url", args.base_url), ("--live-server", args.live_server)):
        if value and urlsplit(value).scheme not in ("http", "https"):
            parser.error(f"{option} must be an absolute http(s) address, got {value!r}")
    try:
        report = export(args.folder, args.base_url and args.base_url.rstrip("/") + "/", args.live_server)
    except ExportError as error:
        print(f"export failed: {error}", file=sys.stderr)
        return 1
    print(report.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())



