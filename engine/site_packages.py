"""The widgets' packages on the live site (engine/packages.py): built once per version of the site,
never per request, and served as files.

    python -m engine.site_packages [VERSION]   builds them into PACKAGES_DIR/<site version>/ (app.py
                                               starts it in the background when its version has none)
    /packages/<document>/<file>       a package, sent as the file it is

The build is the static export's own (engine/export.py, ``packages_only``: the packaged widgets'
embeds and what they load, then the packages), written into a folder beside the finished ones and
renamed into place when whole, so a server never names a half-written package. While it runs, a
lock file (``<version>.building``) holds its process id. A widget's share box names the packages
each time its page is served (the page may be kept from before they were built): with their sizes
when they are built, that they are being made while the build runs, and nothing where this server
makes none (the test suite's apps, unless a test builds them).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from flask import Blueprint, Flask, abort, current_app, render_template, send_from_directory, url_for

from .caching import ONE_YEAR
from .packages import MARKER, MARKER_PATTERN

bp = Blueprint("site_packages", __name__)
MADE = "made.json"  # in a version's folder: {"document/widget": {"zip"|"scorm": [file, bytes]}}
BUILD_NICENESS = 10  # below the site's pages and the model (a start-up chore, not a reader's wait)


def version_folder(app: Flask) -> Path:
    return Path(app.config["PACKAGES_DIR"]) / app.extensions["site_version"]


def _lock(root: Path, version: str) -> Path:
    return root / f"{version}.building"


def made(app: Flask) -> dict | None:
    """The built packages of this version, read once they are there."""
    found = app.extensions.get("site_packages")
    if found is None and (version_folder(app) / MADE).is_file():
        found = app.extensions["site_packages"] = json.loads((version_folder(app) / MADE).read_text())
    return found


def building(app: Flask) -> bool:
    """Whether a build of this version's packages is running (its lock names a live process)."""
    try:
        os.kill(int(_lock(Path(app.config["PACKAGES_DIR"]), app.extensions["site_version"]).read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def fill_packages(marker: dict) -> str:
    """A share box's packages in a page being served (engine/caching.py's finishers)."""
    app = current_app
    if app.config["STATIC_EXPORT"]:  # the marker stays: the export writes its own links there (engine/export.py)
        return MARKER.format(**marker)
    built = made(app)
    files = (built or {}).get(f"{marker['slug']}/{marker['name']}")
    if files:
        return render_template("widgets/_packages.html", **{
            kind: (url_for("site_packages.package", slug=marker["slug"], filename=file.rsplit("/", 1)[-1]), size)
            for kind, (file, size) in files.items()})
    return render_template("widgets/_packages.html", pending=True) if built is None and building(app) else ""


@bp.get("/packages/<slug>/<filename>")
def package(slug: str, filename: str):
    built = made(current_app) or {}
    if f"packages/{slug}/{filename}" not in {file for files in built.values() for file, _ in files.values()}:
        abort(404)
    return send_from_directory(version_folder(current_app) / slug, filename, mimetype="application/zip",
                               as_attachment=True, max_age=ONE_YEAR)


def build(root: Path, version: str, content_dir: Path | None = None) -> Path | None:
    """Build the packages of the site's ``version`` (its app's ``site_version``) into ``root``/<version>,
    removing other versions'; None when another process is building them already."""
    from .export import export

    root.mkdir(parents=True, exist_ok=True)
    target = root / version
    if (target / MADE).is_file():
        return target
    lock = _lock(root, version)
    try:
        descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        try:
            os.kill(int(lock.read_text()), 0)
            return None  # being built
        except (OSError, ValueError):  # a build that died: its lock is stale
            lock.unlink(missing_ok=True)
            return build(root, version, content_dir)
    try:
        os.write(descriptor, str(os.getpid()).encode())
        os.close(descriptor)
        with tempfile.TemporaryDirectory(dir=root, prefix=".build-") as scratch:
            report = export(Path(scratch) / "site", content_dir=content_dir, packages_only=True)
            if report.version != version:  # the files changed since the version was taken: build none
                raise RuntimeError(f"the site is at version {report.version} now, not {version}")
            (Path(scratch) / "site" / "packages" / MADE).write_text(json.dumps(report.packages, sort_keys=True))
            shutil.rmtree(target, ignore_errors=True)
            os.rename(Path(scratch) / "site" / "packages", target)
        for older in root.iterdir():  # no other version is served by this checkout any more
            if older.is_dir() and older != target and not older.name.startswith("."):
                shutil.rmtree(older, ignore_errors=True)
    finally:
        lock.unlink(missing_ok=True)
    return target


def start_building(app: Flask):
    """At start-up (app.py): build this version's packages in a process of their own, unless they
    are built, being built, or PACKAGES_AT_START is off. Returns the process, or None."""
    import subprocess

    if not app.config["PACKAGES_AT_START"] or made(app) is not None or building(app):
        return None
    return subprocess.Popen([sys.executable, "-m", "engine.site_packages", app.extensions["site_version"]],
                            cwd=Path(__file__).resolve().parents[1],
                            env={**os.environ, "PACKAGES_DIR": str(app.config["PACKAGES_DIR"]),
                                 "CONTENT_DIR": str(app.config["CONTENT_DIR"])})


def init_app(app: Flask) -> None:
    app.extensions["caching"].finishers.append((MARKER_PATTERN, fill_packages))
    app.register_blueprint(bp)


def main(argv: list[str]) -> int:
    """``python -m engine.site_packages [VERSION]``: VERSION is the running site's (app.py gives it);
    without it, the version of the files as they are now."""
    from . import create_app
    from .config import default_config

    try:
        os.nice(BUILD_NICENESS)
    except OSError:
        pass
    config = default_config()
    version = argv[0] if argv else create_app().extensions["site_version"]
    try:
        target = build(Path(config["PACKAGES_DIR"]), version, config["CONTENT_DIR"])
    except RuntimeError as error:  # the files changed under a running site: its next start builds them
        print(f"Packages not built: {error}", file=sys.stderr, flush=True)
        return 1
    print(f"Packages: {target}" if target else "Packages: another process is building them", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
