"""HTTP caching and compression.

- Static files get a content hash in their URL (``?v=…`` added by ``url_for``), so they can be
  cached for a year and a changed file is fetched again under its new URL. The hashes are taken
  once, when the app starts, of the files in the static folder (in development, again when a
  file's modification time changes); a request path never makes the server read a file to hash it.
- Pages rendered from content files, and widget pages (whose state is their query string), are
  kept in memory after the first render (``cached_page``) and re-rendered only when a content or
  template file changes (checked on each request only in development, where CONTENT_RELOAD is on).
  A page is kept under its path and only the query parameters its view reads, so made-up
  parameters are served the kept page instead of a render. A client whose renders of pages not yet
  kept have cost more than its budget lately gets 429 with Retry-After (``RenderBudget``), and
  kept pages still answer it and everyone else.
  A page may hold markers for what changes between requests (a live widget); the app's
  ``finishers`` fill them in each time the page is served, and the ETag follows what they wrote.
  A kept page is split at its markers once, when kept: serving it renders only what fills them.
- Every cache belongs to one app (``app.extensions["caching"]``): two apps in a process share none.
- Every 200 answer to GET carries an ETag; a matching If-None-Match gets 304. Text bodies
  (HTML, CSS, JS, JSON, SVG, WebAssembly) are gzip-compressed for clients that accept it, and
  the compressed bytes of files and cached pages are kept so each is compressed once.
"""
from __future__ import annotations

import gzip
import hashlib
import posixpath
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from email.utils import formatdate
from functools import wraps
from pathlib import Path
from urllib.parse import urlencode

from flask import Flask, Response, abort, current_app, g, request
from jinja2 import BaseLoader, ChoiceLoader, FileSystemLoader, PrefixLoader

from .render_budget import RenderBudget, render_within_budget

ONE_YEAR = 365 * 24 * 3600
COMPRESSIBLE_TYPES = {
    "text/html", "text/css", "text/javascript", "application/javascript", "application/json",
    "image/svg+xml", "application/wasm", "text/plain", "application/xml", "text/xml",
}
MIN_COMPRESS_BYTES = 1024
COMPRESSED_CACHE_BYTES = 96 * 1024 * 1024
PAGE_CACHE_BYTES = 32 * 1024 * 1024


class BoundedCache:
    """A thread-safe LRU map, bounded by the total byte size its entries were put with: the site's
    caches whose keys a request can choose are these (tests/engine/test_hostile_caches.py walks them)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        """The total size the entries now held were put with (at most ``max_bytes``)."""
        return self._size

    def get(self, key: str):
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                return None
            self._items.move_to_end(key)
            return entry[0]

    def put(self, key: str, value, size: int) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = (value, size)
            self._size += size
            while self._size > self.max_bytes and self._items:
                _, (_, dropped) = self._items.popitem(last=False)
                self._size -= dropped


class Caches:
    """One app's caches: compressed bodies, rendered pages, file hashes, and the page finishers."""

    def __init__(self, reload: bool):
        self.reload = reload
        self.compressed = BoundedCache(COMPRESSED_CACHE_BYTES)  # ETag -> gzip bytes
        self.pages = BoundedCache(PAGE_CACHE_BYTES)  # page key -> (ETag, HTML bytes, has markers)
        # Widget pages in a state given by their query (any value of any setting): a store of their
        # own, so that a client drawing made-up states evicts other states, never the pages.
        self.states = BoundedCache(PAGE_CACHE_BYTES)
        self.renders = RenderBudget()
        # (marker pattern, fill): each marker a kept page holds is replaced, each time the page is
        # served, by fill(the marker's named groups)
        self.finishers: list[tuple[re.Pattern, Callable[[dict], str]]] = []
        self.content_version: float | None = None
        self._hashes: dict[str, tuple[float, str]] = {}  # resolved path -> (mtime, short hash)
        # A page makes many static URLs, each resolving its path (system calls per path component);
        # resolved once per path. Only paths that resolve to an indexed file are kept (a bounded set).
        self._resolved: dict[str, str] = {}  # path as asked for -> resolved path
        self._lock = threading.Lock()

    def index(self, folder: Path, suffixes: tuple[str, ...] | None = None) -> None:
        """Hash every file under ``folder`` (with one of ``suffixes``) now."""
        for path in Path(folder).rglob("*"):
            if path.is_file() and (suffixes is None or path.suffix in suffixes):
                self._hash(path.resolve())

    def _hash(self, path: Path) -> str:
        mtime = path.stat().st_mtime
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        with self._lock:
            self._hashes[str(path)] = (mtime, digest)
        return digest

    def version(self, path: Path) -> str | None:
        """The indexed file's short hash, or None for a file that was not indexed."""
        try:
            key = self._resolved.get(str(path))
            if key is None:
                key = str(Path(path).resolve())
                if key in self._hashes:
                    self._resolved[str(path)] = key
            hit = self._hashes.get(key)
            if hit is not None and self.reload and Path(key).stat().st_mtime != hit[0]:
                return self._hash(Path(key))
        # A name too long for the file system, or a file removed while reloading (OSError); a NUL in
        # the name (ValueError), which no file can have.
        except (OSError, ValueError):
            return None
        return hit[1] if hit else None


def caches() -> Caches:
    return current_app.extensions["caching"]


def static_version(path: Path) -> str | None:
    """A short hash of an indexed file's bytes (see :meth:`Caches.version`)."""
    return caches().version(path)


def _loader_folders(loader: BaseLoader | None) -> list[Path]:
    if isinstance(loader, FileSystemLoader):
        return [Path(folder) for folder in loader.searchpath]
    inner = loader.loaders if isinstance(loader, ChoiceLoader) else (
        loader.mapping.values() if isinstance(loader, PrefixLoader) else ())
    return [folder for each in inner for folder in _loader_folders(each)]


def template_folders(app: Flask) -> list[Path]:
    """Every folder the app reads templates from, once each: its own loader's (the site's templates,
    each document's folder), then its blueprints' (a package's that registers its own)."""
    loaders = [app.jinja_loader, *(blueprint.jinja_loader for blueprint in app.iter_blueprints())]
    return list(dict.fromkeys(folder for loader in loaders for folder in _loader_folders(loader)))


def content_mtime(app: Flask) -> float:
    """The newest modification time among content and template files: a page's only inputs."""
    return max((p.stat().st_mtime for root in template_folders(app) for p in root.rglob("*") if p.is_file()),
               default=0.0)


def _page_query(choices: Mapping[str, tuple[str, ...]], names) -> str | None:
    """The query a page is kept under: only the parameters its view reads, in one spelling (sorted, a
    choice at its default left out, a repeated setting as one comma list as ``widgets.raw_state``
    reads it). None when a choice has a value the view does not know: that answer is never kept."""
    pairs = []
    for name, known in choices.items():
        value = request.args.get(name, known[0])
        if value not in known:
            return None
        if value != known[0]:
            pairs.append((name, value))
    pairs += [(name, ",".join(request.args.getlist(name))) for name in names if name in request.args]
    return urlencode(sorted(pairs))


def canonical_url() -> str:
    """The URL of the page being rendered, as its view reads it: without parameters it ignores, so a
    kept page never repeats what one reader's URL added (outside a cached view: the path alone)."""
    return g.get("canonical_url") or request.base_url


def cached_page(view=None, *, mimetype: str = "text/html", choices: Mapping[str, tuple[str, ...]] | None = None,
                state: Callable[..., tuple[str, ...]] | None = None):
    """Keep a page's rendered HTML in memory, keyed by the content version, the page's address and
    the query parameters its view reads: ``choices`` ({name: (default, other values…)}, e.g. a
    document's ``sources``) and ``state`` (a function of the view's arguments naming the parameters it
    reads with any value: a widget's settings). Any other parameter is left out of the key, and the
    page is served as kept: ignored, not redirected, because embedding sites and share buttons add
    their own parameters (utm_source, fbclid) and a redirect would cost each such reader a round
    trip without saving the server anything. Pages in a ``state`` are kept in a store of their own.
    Both stores are bounded by bytes, least recently used first out. A render is refused with 429
    when the client's render budget is spent (``RenderBudget``; PAGE_RENDER_BUDGET_S).
    Markers a page holds for what changes between requests are filled in by the app's finishers
    every time it is served. ``@cached_page(mimetype="application/json")`` keeps a view's JSON the
    same way (a widget's view drawn for the API: its inputs are the URL and the content, like its page's)."""
    if view is None:
        return lambda inner: cached_page(inner, mimetype=mimetype, choices=choices, state=state)

    @wraps(view)
    def wrapper(*args, **kwargs):
        app, store = current_app, caches()
        if app.config["CONTENT_RELOAD"] or store.content_version is None:
            store.content_version = content_mtime(app)
        version = store.content_version
        query = _page_query(choices or {}, state(**kwargs) if state else ())
        g.canonical_url = request.base_url + (f"?{query}" if query else "")
        kept = store.states if state and query else store.pages
        key = f"{view.__module__}.{view.__name__}:{version}:{g.canonical_url}"
        cached = kept.get(key) if query is not None else None
        if cached is None:
            rendered = render_within_budget(view, args, kwargs)
            body = rendered.encode("utf-8") if isinstance(rendered, str) else rendered
            # Hashed and split once per render, not per request: the ETag is kept with the page.
            parts = _at_markers(body, store.finishers) if mimetype == "text/html" else (body,)
            cached = (hashlib.sha256(body).hexdigest()[:20], parts)
            if query is not None:
                kept.put(key, cached, len(body) + len(key))  # the key (a URL) counts: it can be 200 KB
        etag, parts = cached
        if len(parts) == 1:
            body = parts[0]
        else:
            fills = [fill(marker).encode("utf-8") for fill, marker in parts[1::2]]
            body = b"".join(part for pair in zip(parts[::2], [*fills, b""], strict=True) for part in pair)
            filled = hashlib.sha256(b"\0".join(fills)).hexdigest()[:8]  # the ETag follows what the fills wrote
            etag = f"{etag}-{filled}"
        response = Response(body, mimetype=mimetype)
        response.headers["Last-Modified"] = formatdate(version, usegmt=True)
        response.set_etag(etag)
        return response

    return wrapper


def _at_markers(body: bytes, finishers) -> tuple:
    """A page's bytes between its markers, each marker as (fill, its named groups) in its place:
    (bytes, (fill, groups), bytes, …, bytes); a page without markers is (bytes,)."""
    if b"<!--live-" not in body:
        return (body,)
    text = body.decode("utf-8")
    found = sorted((match.start(), match.end(), fill, match.groupdict())
                   for pattern, fill in finishers for match in pattern.finditer(text))
    parts, at = [], 0
    for start, end, fill, groups in found:
        parts += [text[at:start].encode("utf-8"), (fill, groups)]
        at = end
    return (*parts, text[at:].encode("utf-8"))


def normalised(filename: str) -> bool:
    """Whether a static or vendor path is already in its one spelling (no "..", ".", "//", leading "/",
    backslash or NUL): only such a path is looked up, so 40,000 spellings of one file are 40,000 misses,
    not reads or cache entries. (An encoded "%2F" or "%2E" arrives decoded, so it is caught too.)"""
    return (bool(filename) and posixpath.normpath(filename) == filename and not filename.startswith(("/", "../"))
            and "\\" not in filename and "\0" not in filename)


def _cache_control(response: Response) -> None:
    if response.status_code >= 400:  # an error may be fixed a moment later: never keep it
        response.cache_control.no_store = True
        response.cache_control.max_age = None
        response.cache_control.public = False
        response.cache_control.immutable = False
        return
    if request.endpoint == "static":
        response.cache_control.no_cache = False
        response.cache_control.public = True
        filename = (request.view_args or {}).get("filename", "")
        indexed = response.status_code == 200 and normalised(filename)
        version = caches().version(Path(current_app.static_folder) / filename) if indexed else None
        if version is not None and request.args.get("v") == version:  # this URL's bytes never change
            response.cache_control.max_age = ONE_YEAR
            response.cache_control.immutable = True
        else:
            response.cache_control.max_age = 300
    elif response.cache_control.max_age is None and not response.cache_control.no_store:
        if response.mimetype == "text/html":
            # Pages revalidate every time; the ETag makes that a cheap 304.
            response.cache_control.no_cache = True


def _not_modified(response: Response, etag: str) -> bool:
    if request.if_none_match:
        return request.if_none_match.contains(etag)
    if request.if_modified_since and response.last_modified:
        return response.last_modified <= request.if_modified_since
    return False


def finalize_response(response: Response) -> Response:
    """Add cache headers, answer conditional GETs with 304, and gzip text bodies."""
    _cache_control(response)
    if request.method not in ("GET", "HEAD") or response.status_code != 200:
        return response
    if response.direct_passthrough:  # a file from send_file: read it so it can be compressed
        response.direct_passthrough = False
    elif response.is_streamed:
        return response
    etag, _weak = response.get_etag()
    if not etag:
        response.add_etag()
        etag, _weak = response.get_etag()

    gzip_it = (
        "gzip" in request.headers.get("Accept-Encoding", "")
        and response.mimetype in COMPRESSIBLE_TYPES
        and "Content-Encoding" not in response.headers
        and (response.content_length or MIN_COMPRESS_BYTES) >= MIN_COMPRESS_BYTES
    )
    response.vary.add("Accept-Encoding")
    served_etag = f"{etag}-gzip" if gzip_it else etag
    if _not_modified(response, served_etag):
        not_modified = Response(status=304)
        for header in ("Cache-Control", "Last-Modified", "Vary"):
            if header in response.headers:
                not_modified.headers[header] = response.headers[header]
        not_modified.set_etag(served_etag)
        response.close()
        return not_modified
    if gzip_it:
        store = caches()
        body = store.compressed.get(served_etag)
        if body is None:
            body = gzip.compress(response.get_data(), compresslevel=6, mtime=0)
            store.compressed.put(served_etag, body, len(body))
        response.close()
        response.set_data(body)
        response.headers["Content-Encoding"] = "gzip"
        response.set_etag(served_etag)
    return response


def init_app(app: Flask) -> None:
    store = Caches(app.config["CONTENT_RELOAD"])
    store.index(Path(app.static_folder))
    app.extensions["caching"] = store

    @app.before_request
    def refuse_unnormalised_static_paths() -> None:
        # One spelling per file: "css//site.css" or "css/./site.css" is a 404, not a second URL.
        if request.endpoint == "static" and not normalised((request.view_args or {}).get("filename", "")):
            abort(404)

    @app.url_defaults
    def add_static_version(endpoint: str, values: dict) -> None:
        if endpoint == "static" and normalised(values.get("filename", "")) and "v" not in values:
            version = store.version(Path(app.static_folder) / values["filename"])
            if version is not None:
                values["v"] = version


def register_after(app: Flask) -> None:
    """Add cache headers, 304s and compression to every response."""
    app.after_request(finalize_response)
