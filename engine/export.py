"""The site as static files: ``python -m engine.export OUT [--base-url URL] [--live-server URL]
[--packages DOCUMENT/WIDGET ...]`` (the widgets packaged: every one the worker draws, unless named).

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
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from flask import Flask, render_template, url_for
from flask_frozen import Freezer, MissingURLGeneratorWarning

from . import create_app
from .export_paths import FREEZE_ORIGIN, endpoint_of, file_for, references, rewrite
from .packages import fill_markers, packaged_widgets, write_packages
from .published_answers import read_index as read_published
from .python_runtime import _FILES as PYODIDE_FILES

# The routes a static host can answer (what they return depends on their address only); a page
# named by the export that is of another route (a live form's page) is written as a note that it is
# on the live site (templates/live_elsewhere_page.html); an /api/ address of another route fails.
STATIC_ENDPOINTS = {
    "pages.index", "pages.document", "pages.glossary", "widgets.gallery", "widgets.page", "widgets.embed",
    "widgets.asset", "static", "vendor.editor_entry", "vendor.vendor_file", "python_runtime.runtime_index",
    "python_runtime.pyodide_file", "python_runtime.wheel_file", "math_core_page.math_core", "explainers_api.index",
    "offline.offline_index", "offline.service_worker", "offline.manifest",
}
# Pages for reading, which a widget's package does not hold (packages_only: not followed).
READING_ENDPOINTS = {"pages.index", "pages.document", "pages.glossary", "widgets.gallery", "widgets.page",
                     "math_core_page.math_core", "offline.offline_index", "offline.service_worker", "offline.manifest"}
TEXT_SUFFIXES = {".html", ".js", ".json", ".css", ""}  # "": the runtime's index under api/


class ExportError(Exception):
    """A page that would 404 on the static host, or that names an address outside the folder."""


@dataclass
class ExportReport:
    folder: Path
    files: int
    bytes: int
    seconds: float
    version: str  # the site's (engine/offline.py)
    packages: dict[str, dict[str, list]]  # {"document/widget": {"zip"|"scorm": [file, bytes]}}

    def line(self) -> str:
        return (f"Exported {self.files} files, {self.bytes / 2**20:.1f} MiB ({self.bytes:,} bytes), "
                f"to {self.folder} in {self.seconds:.1f} s")


class _Freezer(Freezer):
    def urlpath_to_filepath(self, path: str) -> str:
        return file_for(self.app, path)


def _seeds(app: Flask, packaged: dict[str, list] | None = None) -> list[str]:
    """Every page and runtime file the export starts from (what they name is followed); with
    ``packaged``, only what those widgets' packages hold: their embeds and the runtime."""
    urls = [] if packaged is not None else [url_for("pages.index"), url_for("math_core_page.math_core")]
    for slug, document in app.extensions["documents"].items():
        if packaged is not None:
            urls += [url_for("widgets.embed", slug=slug, name=name) for name, _ in packaged.get(slug, ())]
            continue
        urls += [url_for("pages.document", slug=slug), url_for("pages.document", slug=slug, sources="on"),
                 url_for("pages.glossary", slug=slug), url_for("widgets.gallery", slug=slug)]
        for name in document.widgets:
            urls += [url_for("widgets.page", slug=slug, name=name), url_for("widgets.embed", slug=slug, name=name)]
    urls.append(url_for("python_runtime.runtime_index"))
    if packaged is None:
        urls += [url_for("offline.offline_index"), url_for("offline.service_worker"), url_for("offline.manifest")]
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


class _Export:
    """One export: the app rendering for it, the files written, the addresses still to follow."""

    def __init__(self, app: Flask, folder: Path, base_url: str | None, live_server: str | None,
                 packaged: dict[str, list], packages_only: bool):
        self.app, self.folder, self.base_url, self.live_server = app, folder, base_url, live_server
        self.packaged, self.packages_only = packaged, packages_only
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
        if self.packages_only and (endpoint in READING_ENDPOINTS or endpoint not in STATIC_ENDPOINTS):
            return  # a page the packages do not hold (they name it at base_url, or not at all)
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
        """A live form's page: a note that it is on the live site, and where its document ships published
        runs' answers (engine/published_answers.py), the form that shows them for standard questions."""
        for name, url in sorted(self.live_pages.items()):
            slug = urlsplit(url).path.strip("/").split("/")[0]
            published = slug in self.app.extensions["documents"] and read_published(self.folder / slug)
            with self.app.test_request_context(urlsplit(url).path, base_url=FREEZE_ORIGIN + "/"):
                page = render_template("live_elsewhere_page.html", path=url, published=published or None,
                                       document=self.app.extensions["documents"].get(slug),
                                       live_url=self.live_server and self.live_server.rstrip("/") + url)
            (self.folder / name).parent.mkdir(parents=True, exist_ok=True)
            (self.folder / name).write_text(page, encoding="utf-8")
            self.written.append(name)

    def run(self) -> dict[str, dict[str, list]]:
        # Every file under static/ too (scripts import one another, and the worker, by relative address).
        freezer = _Freezer(self.app, with_static_files=True, with_no_argument_rules=False, log_url_for=False)
        freezer.register_generator(self.followed)
        if not self.packages_only:
            self.write_document_files()
        with self.app.test_request_context(base_url=FREEZE_ORIGIN + "/"):
            for url in _seeds(self.app, self.packaged if self.packages_only else None):
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
        return self.write_packages()

    def write_packages(self) -> dict[str, dict[str, list]]:
        """Each widget's packages (engine/packages.py), from the rewritten files; then the links to
        them in the share boxes, where the pages left their markers (none: the widget is not packaged)."""
        made = write_packages(self.folder, self.packaged, self.base_url)
        for name in self.written:
            path = self.folder / name
            if name.endswith(".html") and "<!--live-packages:" in (text := path.read_text(encoding="utf-8")):
                root = "../" * len(PurePosixPath(name).parent.parts)
                path.write_text(fill_markers(text, lambda slug, widget, root=root: self.links(made, root, slug, widget)),
                                encoding="utf-8")
        return {f"{slug}/{widget}": {kind: list(entry) for kind, entry in files.items()}
                for (slug, widget), files in sorted(made.items())}

    def links(self, made: dict, root: str, slug: str, widget: str) -> str:
        """The share box's links to a widget's packages, from a page ``root`` below the folder's top."""
        if (slug, widget) not in made:
            return ""
        with self.app.app_context():
            return render_template("widgets/_packages.html", **{
                kind: (root + file, size) for kind, (file, size) in made[(slug, widget)].items()})


def export(folder: Path, base_url: str | None = None, live_server: str | None = None,
           content_dir: Path | None = None, packages: list[str] | None = None,
           packages_only: bool = False) -> ExportReport:
    """Write the static site into ``folder`` (emptied first); see the module's docstring.
    ``packages``: the widgets packaged ("document/widget"; None: every one the worker draws);
    ``packages_only``: write only what their packages hold, and the packages (engine/site_packages.py)."""
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
    try:
        packaged = packaged_widgets(app.extensions["documents"], packages)
    except ValueError as error:
        raise ExportError(str(error)) from None
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    made = _Export(app, folder, base_url, live_server, packaged, packages_only).run()
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return ExportReport(folder, len(files), sum(p.stat().st_size for p in files), time.monotonic() - started,
                        app.extensions["site_version"], made)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="where to write the site (emptied first)")
    parser.add_argument("--base-url", help="the export's absolute address (https://host/path/): enables oEmbed")
    parser.add_argument("--live-server", help="the live site's address, linked where a page needs it")
    parser.add_argument("--packages", action="append", metavar="DOCUMENT/WIDGET",
                        help="package only this widget (repeatable; default: every widget the worker draws)")
    args = parser.parse_args(argv)
    for option, value in (("--base-url", args.base_url), ("--live-server", args.live_server)):
        if value and urlsplit(value).scheme not in ("http", "https"):
            parser.error(f"{option} must be an absolute http(s) address, got {value!r}")
    try:
        report = export(args.folder, args.base_url and args.base_url.rstrip("/") + "/", args.live_server,
                        packages=args.packages)
    except ExportError as error:
        print(f"export failed: {error}", file=sys.stderr)
        return 1
    print(report.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())



