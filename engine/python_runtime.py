"""The browser's Python runtime, served from our own origin: Pyodide's files, the wheel (see
wheel.py) and the index the worker (static/js/python-runtime-worker.js) starts from,
``GET /api/python-runtime``.

Both URLs carry a version (Pyodide's, from its package.json) or a content digest (the wheel's), so
they can be cached for a year: a new release gets a new URL. WebAssembly must be served as
application/wasm for streaming compilation, and ES modules as text/javascript.
"""
from __future__ import annotations

import json
from pathlib import Path

from flask import Blueprint, Flask, Response, abort, current_app, jsonify, send_from_directory, url_for

from .caching import ONE_YEAR
from .wheel import build_wheel

bp = Blueprint("python_runtime", __name__)
_URL = {"type": "string"}
bp.openapi = {  # collected into /api/openapi.json (engine/openapi.py)
    "/api/python-runtime": {"get": {"operationId": "python_runtime", "summary": "where the browser's worker finds "
                                    "Pyodide and the wheel of the site's Python", "responses": {"200": {
        "description": "the runtime's addresses (the Pyodide ones null when it is not installed)",
        "content": {"application/json": {"schema": {"type": "object", "required": ["wheel"], "properties": {
            "wheel": _URL, "pyodide_index": {"type": "string", "nullable": True},
            "pyodide_module": {"type": "string", "nullable": True},
            "pyodide_version": {"type": "string", "nullable": True}}}}}}}}},
}

# Only the files Pyodide loads at start-up (and the loader's source map), each with its MIME type.
_FILES = {
    "pyodide.mjs": "text/javascript",
    "pyodide.mjs.map": "application/json",
    "pyodide.asm.mjs": "text/javascript",
    "pyodide.asm.wasm": "application/wasm",
    "python_stdlib.zip": "application/zip",
    "pyodide-lock.json": "application/json",
}


def pyodide_version(pyodide_dir: Path) -> str | None:
    """The installed Pyodide's version, or None when `npm ci` has not been run (the server still works)."""
    try:
        return json.loads((pyodide_dir / "package.json").read_text())["version"]
    except FileNotFoundError:
        return None


def runtime_urls() -> dict:
    """Where the worker finds Pyodide (its module and its folder) and the wheel."""
    version = current_app.extensions["pyodide_version"]
    wheel = current_app.extensions["browser_wheel"]
    wheel_url = url_for("python_runtime.wheel_file", digest=wheel.digest, filename=wheel.filename)
    if version is None:
        return {"pyodide_version": None, "pyodide_index": None, "pyodide_module": None, "wheel": wheel_url}
    module = url_for("python_runtime.pyodide_file", version=version, filename="pyodide.mjs")
    return {
        "pyodide_version": version,
        "pyodide_index": module.rsplit("/", 1)[0] + "/",
        "pyodide_module": module,
        "wheel": wheel_url,
    }


@bp.get("/api/python-runtime")
def runtime_index():
    return jsonify(runtime_urls())


@bp.get("/pyodide/<version>/<filename>")
def pyodide_file(version: str, filename: str):
    mime = _FILES.get(filename)
    if mime is None or version != current_app.extensions["pyodide_version"]:
        abort(404)
    response = send_from_directory(current_app.config["PYODIDE_DIR"], filename, mimetype=mime, max_age=ONE_YEAR)
    response.cache_control.immutable = True
    response.cache_control.public = True
    return response


@bp.get("/wheels/<digest>/<filename>")
def wheel_file(digest: str, filename: str):
    wheel = current_app.extensions["browser_wheel"]
    if digest != wheel.digest or filename != wheel.filename:
        abort(404, description="No such wheel; ask /api/python-runtime for the current URL.")
    response = Response(wheel.data, mimetype="application/zip")
    response.cache_control.max_age = ONE_YEAR
    response.cache_control.immutable = True
    response.cache_control.public = True
    return response


def init_app(app: Flask) -> None:
    """Build the wheel from the current source and register the routes."""
    app.extensions["browser_wheel"] = build_wheel(app.extensions["documents"])
    app.extensions["pyodide_version"] = pyodide_version(app.config["PYODIDE_DIR"])
    if app.extensions["pyodide_version"] is None:
        app.logger.warning("no Pyodide in %s (run npm ci): browsers will use the JSON API", app.config["PYODIDE_DIR"])
    app.register_blueprint(bp)
