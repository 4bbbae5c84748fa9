"""Build the Python the browser runs into one pure-Python wheel, in memory, with the standard library only.

The wheel holds the math core (explainers/), the widget kit (widgetkit/), every other package of the
site's own that a document's browser code imports (found in its import statements; each whole but
for its server/ folders, which are the server's) and each document's Python under the name the
server imports it by (``documents/<slug>/``, without its server-only hooks.py and server/): everything a widget's
view needs, so the reader's browser runs the very source the server runs, the served folder's own. It is built when the app starts
(no manual step to forget) and is byte-for-byte
reproducible: files are sorted and stamped with a fixed date, so the same source gives the same
digest, which the wheel's URL carries for safe long-term caching. A pure wheel needs no
pyodide-build (which would download a cross-build environment); Pyodide unpacks it as it is.

    python -m engine.wheel OUT_DIR     # write the wheel to a folder (tests, bench)
"""
from __future__ import annotations

import ast
import base64
import hashlib
import io
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from widgetkit.registry import PACKAGE, document_package

from .config import REPO_ROOT, default_config
from .documents import Document, load_documents

NAME = "browser_python"
ALWAYS = ("explainers", "widgetkit")  # the math core and the widget kit: every widget's view runs on them
# 1980-01-01, the earliest date a zip entry can hold: fixed so rebuilding changes no byte.
_FIXED_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Wheel:
    filename: str
    data: bytes

    @property
    def digest(self) -> str:
        """A short content hash, for cache-busting URLs."""
        return hashlib.sha256(self.data).hexdigest()[:16]


def wheel_version(files: list[tuple[str, bytes]]) -> str:
    """The wheel's own version: "0+" and a hash of the files it packs, so it changes exactly when
    the Python the browser runs changes (a local version label, which a wheel's name may carry)."""
    digest = hashlib.sha256()
    for path, data in files:
        digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return f"0+{digest.hexdigest()[:12]}"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _python_files(root: Path, under: str, server_only=lambda relative: False) -> list[tuple[str, bytes]]:
    """Every .py file below ``root`` that the browser may run, as (path inside the wheel, bytes), sorted."""
    return [
        (f"{under}/{path.relative_to(root).as_posix()}", path.read_bytes())
        for path in sorted(root.rglob("*.py"))
        if "__pycache__" not in path.parts and not server_only(path.relative_to(root))
    ]


def _in_server_folder(relative: Path) -> bool:
    return "server" in relative.parts[:-1]


def _document_server_side(relative: Path) -> bool:
    """A document's hooks.py and server/ folder: its web side, which the browser never runs."""
    return relative.as_posix() == "hooks.py" or relative.parts[0] == "server"


def _imported_tops(path: Path) -> set[str]:
    """The top-level names of the absolute imports in one Python file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def site_packages(documents: dict[str, Document]) -> list[str]:
    """The site's own packages (folders beside the engine) the documents' browser code imports,
    besides ALWAYS, sorted."""
    found = set()
    for document in documents.values():
        for path in document.folder.rglob("*.py"):
            if "__pycache__" not in path.parts and not _document_server_side(path.relative_to(document.folder)):
                found |= _imported_tops(path)
    return sorted(name for name in found - {*ALWAYS, PACKAGE} if (REPO_ROOT / name / "__init__.py").is_file())


def browser_files(documents: dict[str, Document]) -> list[tuple[str, bytes]]:
    """The Python the browser runs, as (path inside the wheel, bytes)."""
    files = [file for name in ALWAYS for file in _python_files(REPO_ROOT / name, name)]
    for name in site_packages(documents):
        files += _python_files(REPO_ROOT / name, name, _in_server_folder)
    files.append((f"{PACKAGE}/__init__.py", b""))
    for document in documents.values():
        under = document_package(document.slug).replace(".", "/")
        own = _python_files(document.folder, under, _document_server_side)
        if f"{under}/__init__.py" not in dict(own):
            own.insert(0, (f"{under}/__init__.py", b""))
        files += own
    return files


def build_wheel(documents: dict[str, Document]) -> Wheel:
    """Zip the browser's packages with the dist-info metadata a wheel needs (METADATA, WHEEL, RECORD)."""
    files = browser_files(documents)
    version = wheel_version(files)
    dist_info = f"{NAME}-{version}.dist-info"
    files.append((f"{dist_info}/METADATA", (
        f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
        "Summary: The math core, the widget kit, the packages the documents' widgets import and the widgets.\n"
        "Requires-Python: >=3.11\n"
    ).encode()))
    files.append((f"{dist_info}/WHEEL", (
        b"Wheel-Version: 1.0\nGenerator: engine.wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )))
    record = "\n".join(_record_line(path, data) for path, data in files) + f"\n{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=_FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return Wheel(f"{NAME}-{version}-py3-none-any.whl", buffer.getvalue())


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit("usage: python -m engine.wheel OUT_DIR")
    wheel = build_wheel(load_documents(default_config()["CONTENT_DIR"]))
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / wheel.filename).write_bytes(wheel.data)
    print(out / wheel.filename)


if __name__ == "__main__":
    main(sys.argv[1:])
