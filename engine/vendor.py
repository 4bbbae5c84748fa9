"""The snippet editor's code (CodeMirror 6), served as ES modules straight from node_modules.

``npm ci`` installs the exact versions package.json names; nothing is bundled or committed. The
page's Content-Security-Policy allows no inline script, so an inline import map cannot name the
packages; instead each served file's bare imports (``from "@codemirror/state"``) are rewritten to
this route's versioned URLs (``/vendor/@codemirror/state@6.7.6/dist/index.js``), which can be
cached for a year. Only the packages the editor needs (the roots below and their dependencies,
read from each package.json) and only their .js files are served.

``/vendor/editor.js`` is the one entry the page imports, and only when a reader opens a snippet
for editing (static/js/snippet-editor.js): it re-exports each root package as a namespace.

A file is served under one spelling of its path only (``caching.normalised``, as for /static/): any
other (``dist/x/../index.js``, ``dist/./index.js``, ``dist//index.js``, a backslash, a NUL) is a 404.
The rewritten files are kept by resolved path in a cache bounded by bytes (issue 41: keyed by the
spelling, 2,000 spellings of one file held 2,000 copies, about 1.1 MiB of memory each).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from flask import Blueprint, Flask, Response, abort, current_app, request

from .caching import ONE_YEAR, BoundedCache, normalised

ROOTS = ("@codemirror/state", "@codemirror/view", "@codemirror/commands", "@codemirror/language",
         "@codemirror/lang-python", "@lezer/highlight")
# `from "x"`, `import "x"`, `import("x")` and `export … from "x"` with a bare specifier.
_BARE_IMPORT = re.compile(r"""(\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'./][^"']*)\2""")
VENDOR_CACHE_BYTES = 8 * 2**20  # all 25 served files (15 packages) come to 1.1 MiB of UTF-8: they fit

bp = Blueprint("vendor", __name__)


def _entry(package_json: dict) -> str:
    exports = package_json.get("exports")
    if isinstance(exports, dict):
        main = exports.get(".", exports)
        if isinstance(main, dict) and isinstance(main.get("import"), str):
            return main["import"].removeprefix("./")
    return package_json.get("module") or package_json.get("main") or "index.js"


def find_packages(node_modules: Path) -> dict[str, dict]:
    """name → {version, dir, entry} for the roots and everything they depend on; {} when not installed."""
    found: dict[str, dict] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        folder = node_modules / name
        try:
            meta = json.loads((folder / "package.json").read_text())
        except FileNotFoundError:
            return {}
        found[name] = {"version": meta["version"], "dir": folder.resolve(), "entry": _entry(meta)}
        todo += list(meta.get("dependencies", {}))
    return found


def package_url(name: str, file: str | None = None) -> str:
    package = current_app.extensions["vendor_packages"][name]
    return f"/vendor/{name}@{package['version']}/{file or package['entry']}"


def rewrite_imports(source: str) -> str:
    packages = current_app.extensions["vendor_packages"]

    def replace(match: re.Match) -> str:
        name = match.group(3)
        if name not in packages:
            return match.group(0)
        return f"{match.group(1)}{match.group(2)}{package_url(name)}{match.group(2)}"

    return _BARE_IMPORT.sub(replace, source)


def _javascript(body: str | bytes, *, immutable: bool) -> Response:
    response = Response(body, mimetype="text/javascript")
    if immutable:
        response.cache_control.max_age = ONE_YEAR
        response.cache_control.immutable = True
        response.cache_control.public = True
    else:
        response.cache_control.no_cache = True
    return response


@bp.get("/vendor/editor.js")
def editor_entry():
    packages = current_app.extensions["vendor_packages"]
    if not packages:
        abort(404, description="The snippet editor is not installed on this server (run npm ci).")
    names = {root: re.sub(r"\W", "_", root.split("/")[-1]) for root in ROOTS}
    lines = [f'import * as {alias} from "{package_url(root)}";' for root, alias in names.items()]
    lines.append(f"export {{ {', '.join(names.values())} }};")
    return _javascript("\n".join(lines) + "\n", immutable=False)


@bp.before_request
def refuse_unnormalised_specs() -> None:
    # Before the view, so that OPTIONS (answered without it) gets the same 404.
    if request.endpoint == "vendor.vendor_file" and not normalised(request.view_args["spec"]):
        abort(404, description="A /vendor/ file is served under one spelling of its path only: "
                               "no '.', '..' or empty segments, no backslash or NUL.")


@bp.get("/vendor/<path:spec>")
def vendor_file(spec: str):
    packages = current_app.extensions["vendor_packages"]
    parts = spec.split("/")
    cut = 2 if spec.startswith("@") else 1  # "@scope/name@version" or "name@version", then the file
    head, file = "/".join(parts[:cut]), "/".join(parts[cut:])
    name, _, version = head.rpartition("@")
    package = packages.get(name)
    if package is None or version != package["version"] or not file.endswith(".js"):
        abort(404)
    path = (package["dir"] / file).resolve()
    if not path.is_relative_to(package["dir"]) or not path.is_file():
        abort(404)
    cache = current_app.extensions["vendor_cache"]
    body = cache.get(str(path))
    if body is None:
        body = rewrite_imports(path.read_text(encoding="utf-8")).encode("utf-8")
        cache.put(str(path), body, len(body))
    return _javascript(body, immutable=True)


def init_app(app: Flask) -> None:
    node_modules = Path(app.config["PYODIDE_DIR"]).parent
    app.extensions["vendor_packages"] = find_packages(node_modules)
    app.extensions["vendor_cache"] = BoundedCache(VENDOR_CACHE_BYTES)  # resolved path -> rewritten bytes
    if not app.extensions["vendor_packages"]:
        app.logger.warning("no CodeMirror in %s (run npm ci): snippets stay read-only", node_modules)
    app.register_blueprint(bp)
