"""Offline reading and installing, for the live site and its static export (engine/export.py):

    /service-worker.js      the service worker (static/js/service-worker.js, with the site's version in it)
    /manifest.webmanifest   the web app manifest (the site is installable)
    /api/offline            what the worker saves: {version, saved: [...], runtime: [...], whole: bool}

The version is a digest of everything a page is made from (the site's static files, templates,
every document's folder, the browser wheel, Pyodide's version): a change anywhere gives a new
service worker script, which the browser installs on the next visit; it saves the new version's
files in a cache of their own and deletes the older caches (no stale mix).

``saved`` are the files any page may need (the site's scripts and styles, the snippet editor's
modules, the runtime's index); ``runtime`` Pyodide's start-up files and the wheel, which the worker
saves at once only where ``whole`` (the static export: taking the site away is the point), and
otherwise as the reader's first widget or snippet fetches them (a reader who only reads downloads
no Pyodide). The page a reader visits, and everything it loaded, is saved when it is shown.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from flask import Blueprint, Flask, Response, current_app, jsonify, url_for

from .caching import template_folders
from .python_runtime import _FILES as PYODIDE_FILES

bp = Blueprint("offline", __name__)
_VERSION_MARK = "__SITE_VERSION__"
_ROOT_IMPORT = re.compile(r"""\bfrom\s*["'](/vendor/[^"']+)["']""")
bp.openapi = {  # collected into /api/openapi.json (engine/openapi.py)
    "/api/offline": {"get": {"operationId": "offline_files", "summary": "what the service worker saves for "
                             "reading offline", "responses": {"200": {"description": "the site's version and "
                             "the files to save", "content": {"application/json": {"schema": {
                                 "type": "object", "required": ["version", "saved", "runtime", "whole"],
                                 "properties": {"version": {"type": "string"},
                                                "saved": {"type": "array", "items": {"type": "string"}},
                                                "runtime": {"type": "array", "items": {"type": "string"}},
                                                "whole": {"type": "boolean"}}}}}}}}},
}


def site_version(app: Flask) -> str:
    """A digest of every file a page is made from (see the module's docstring)."""
    digest = hashlib.sha256()
    folders = [Path(app.static_folder), *template_folders(app)]  # each document's folder among the templates
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    digest.update(app.extensions["browser_wheel"].digest.encode())
    digest.update(str(app.extensions["pyodide_version"]).encode())
    return digest.hexdigest()[:16]


def _vendor_files() -> list[str]:
    """The snippet editor's entry and every module it imports, followed through the app itself."""
    if not current_app.extensions["vendor_packages"]:
        return []
    client = current_app.test_client()
    todo, found = [url_for("vendor.editor_entry")], []
    while todo:
        url = todo.pop()
        if url in found:
            continue
        found.append(url)
        todo += _ROOT_IMPORT.findall(client.get(url).get_data(as_text=True))
    return sorted(found)


def offline_files() -> dict:
    static = Path(current_app.static_folder)
    saved = [url_for("static", filename=str(p.relative_to(static))).split("?")[0]
             for p in sorted(static.rglob("*")) if p.is_file()]
    saved += [*_vendor_files(), url_for("python_runtime.runtime_index"), url_for("offline.manifest")]
    wheel = current_app.extensions["browser_wheel"]
    runtime = [url_for("python_runtime.wheel_file", digest=wheel.digest, filename=wheel.filename)]
    version = current_app.extensions["pyodide_version"]
    if version:
        runtime += [url_for("python_runtime.pyodide_file", version=version, filename=name)
                    for name in PYODIDE_FILES if not name.endswith(".map")]
    return {"version": current_app.extensions["site_version"], "saved": saved, "runtime": runtime,
            "whole": bool(current_app.config["STATIC_EXPORT"])}


@bp.get("/api/offline")
def offline_index():
    made = current_app.extensions.get("offline_files")
    if made is None:  # once per app: the vendor modules are followed through the app
        made = current_app.extensions["offline_files"] = offline_files()
    return jsonify(made)


@bp.get("/service-worker.js")
def service_worker():
    source = (Path(current_app.static_folder) / "js" / "service-worker.js").read_text(encoding="utf-8")
    response = Response(source.replace(_VERSION_MARK, current_app.extensions["site_version"]),
                        mimetype="text/javascript")
    response.cache_control.no_cache = True  # the browser asks again on each visit: an update shows at once
    return response


@bp.get("/manifest.webmanifest")
def manifest():
    papers = current_app.extensions["documents"].values()
    response = jsonify({
        "name": "Annotated papers", "short_name": "Papers",
        "description": "Interactive annotated papers: " + "; ".join(p.meta["short_title"] for p in papers),
        "start_url": "./", "scope": "./", "display": "standalone",
        "background_color": "#fdfcf7", "theme_color": "#fdfcf7",
        # Relative to this file, which is at the site's root (or the export's).
        "icons": [{"src": "static/favicon.svg", "sizes": "any",
                   "type": "image/svg+xml", "purpose": "any"}],
    })
    response.mimetype = "application/manifest+json"
    return response


def init_app(app: Flask) -> None:
    app.extensions["site_version"] = site_version(app)
    app.register_blueprint(bp)
