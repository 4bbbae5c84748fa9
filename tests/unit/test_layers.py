"""The packages' import rules, each stated in its README, checked on every import statement.

    explainers/   the standard library only
    widgetkit/    the standard library and explainers (both run in the browser)
    livescoring/  no web layer: never flask, werkzeug, engine, benchmarks or a document
    benchmarks/   outside a server/ folder (the browser wheel): the standard library, explainers,
                  widgetkit and benchmarks' own modules outside server/
    engine/       never benchmarks, livescoring or a document (documents reach it through their hooks)
    content/<d>/  never another document; outside hooks.py and server/ (the browser wheel) the standard
                  library, explainers, widgetkit, sans-I/O benchmarks and the document's own modules
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STDLIB = set(sys.stdlib_module_names) | {"__future__"}
DOCUMENTS = sorted(p.parent for p in (ROOT / "content").glob("*/paper.toml"))


def imports(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in ``path``; ``package`` resolves relative ones."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.append((node.lineno, ".".join([*base, node.module] if node.module else base)))
            else:
                found.append((node.lineno, node.module))
    return found


def package_of(path: Path, root: Path, name: str) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join([name, *parts[:-1]] if path.name != "__init__.py" else [name, *parts])


def top(module: str) -> str:
    return module.split(".")[0]


def sans_io_benchmark(module: str) -> bool:
    return top(module) == "benchmarks" and "server" not in module.split(".")


def breaches(folder: Path, name: str, allowed) -> list[str]:
    """Every import under ``folder`` (imported as package ``name``) that ``allowed(path, module)`` refuses."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        for line, module in imports(path, package_of(path, folder, name)):
            if not allowed(path.relative_to(folder), module):
                found.append(f"{path.relative_to(folder.parent)}:{line} imports {module}")
    return found


RULES = {
    "explainers": lambda path, m: top(m) in STDLIB or top(m) == "explainers",
    "widgetkit": lambda path, m: top(m) in STDLIB or top(m) in ("widgetkit", "explainers"),
    "livescoring": lambda path, m: top(m) not in ("flask", "werkzeug", "engine", "benchmarks", "documents"),
    "benchmarks": lambda path, m: "server" in path.parts or top(m) in STDLIB or top(m) in ("explainers", "widgetkit")
    or sans_io_benchmark(m),
    "engine": lambda path, m: top(m) not in ("benchmarks", "livescoring", "documents"),
}


@pytest.mark.parametrize("package", sorted(RULES))
def test_package_keeps_its_import_rule(package):
    assert not breaches(ROOT / package, package, RULES[package])


@pytest.mark.parametrize("folder", DOCUMENTS, ids=lambda p: p.name)
def test_document_imports_no_other_document_and_ships_only_browser_code(folder):
    own = "documents." + folder.name.replace("-", "_")

    def allowed(path: Path, module: str) -> bool:
        if top(module) == "documents":
            return module == own or module.startswith(own + ".")
        if path.as_posix() == "hooks.py" or path.parts[0] == "server":  # the server side: anything but another document
            return True
        return top(module) in STDLIB or top(module) in ("explainers", "widgetkit") or sans_io_benchmark(module)

    assert not breaches(folder, own, allowed)


def test_the_checker_catches_what_it_forbids(tmp_path):
    """The rules above are not vacuous: a document reaching into another, a widget reading a server
    module and livescoring importing Flask are each reported."""
    doc = tmp_path / "some-doc"
    (doc / "widgets").mkdir(parents=True)
    (doc / "widgets" / "w.py").write_text(
        "from documents.other_doc import figures\nfrom benchmarks.mmlu.server import reader\nfrom ..figures import X\n")
    found = breaches(doc, "documents.some_doc", lambda path, m: (
        m.startswith("documents.some_doc") if top(m) == "documents" else sans_io_benchmark(m)))
    assert [f.split(" imports ")[1] for f in found] == ["documents.other_doc", "benchmarks.mmlu.server"]
    lib = tmp_path / "livescoring"
    lib.mkdir()
    (lib / "x.py").write_text("import torch\nfrom flask import Flask\n")
    assert [f.split(" imports ")[1] for f in breaches(lib, "livescoring", RULES["livescoring"])] == ["flask"]
