"""The packages' import rules, each stated in its README, checked on every import statement.

    explainers/   the standard library only
    widgetkit/    the standard library and explainers (both run in the browser)
    livescoring/  no web layer: never flask, werkzeug, engine, benchmarks or a document
    benchmarks/   outside a server/ folder (the browser wheel): the standard library, explainers,
                  widgetkit and benchmarks' own modules outside server/
    engine/       never benchmarks, livescoring or a document (documents reach it through their hooks),
                  and no string or comment names the benchmarks' folder, a module of theirs or a benchmark
    the shared benchmark layer (benchmarks/*.py, benchmarks/server/): never a particular benchmark
                  (it finds one through benchmarks/registry.py)
    content/<d>/  never another document; outside hooks.py and server/ (the browser wheel) the standard
                  library, explainers, widgetkit, sans-I/O benchmarks and the document's own modules
"""
from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
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


# -- benchmarks and the layers that must not know one ------------------------------------------

BENCHMARK_PACKAGES = sorted(p.parent.name for p in (ROOT / "benchmarks").glob("*/task.py"))
# The benchmarks/ folder or one of its modules named in a string or comment ("benchmarks/gate.py",
# "benchmarks.mmlu", the bare "benchmarks" of a path or loader prefix); the English word is free.
BENCHMARKS_FOLDER = re.compile(r"""\bbenchmarks(?:/|\.[A-Za-z_])|(?<![\w-])["']benchmarks["']""")


def names_a_benchmark(source: str, packages: list[str]) -> list[tuple[int, str]]:
    """(line, text) of every string and comment in ``source`` naming the benchmarks' folder or
    module, or a benchmark's package as a word (``mmlu``, ``MMLU``, ``mmlu_pro``)."""
    package = re.compile(r"\b(?:" + "|".join(map(re.escape, packages)) + r")\b", re.I)
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT) and (
                BENCHMARKS_FOLDER.search(token.string) or package.search(token.string)):
            found.append((token.start[0], token.string))
    return found


def engine_breaches(folder: Path, packages: list[str]) -> list[str]:
    """The engine's imports of benchmarks and its strings and comments naming them."""
    found = breaches(folder, "engine", lambda path, m: top(m) != "benchmarks")
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" not in path.parts:
            found += [f"{path.relative_to(folder.parent)}:{line}: {text}"
                      for line, text in names_a_benchmark(path.read_text(encoding="utf-8"), packages)]
    return found


def shared_layer_breaches(folder: Path, packages: list[str]) -> list[str]:
    """Imports of a particular benchmark (``benchmarks.<package>``, relative or not) in the shared
    benchmark layer: benchmarks/*.py and benchmarks/server/."""
    def particular(module: str) -> bool:
        parts = module.split(".")
        return parts[0] == "benchmarks" and len(parts) > 1 and parts[1] in packages

    found = []
    for path in sorted([*folder.glob("*.py"), *(folder / "server").rglob("*.py")]):
        for line, module in imports(path, package_of(path, folder, "benchmarks")):
            if particular(module):
                found.append(f"{path.relative_to(folder.parent)}:{line} imports {module}")
    return found


def test_the_engine_names_no_benchmark():
    """engine/ neither imports benchmarks nor names their folder, a module of theirs or a benchmark
    (a template prefix, a path, a package in the wheel): documents and the site tell it."""
    assert BENCHMARK_PACKAGES and not engine_breaches(ROOT / "engine", BENCHMARK_PACKAGES)


def test_the_shared_benchmark_layer_imports_no_particular_benchmark():
    """benchmarks/*.py and benchmarks/server/ find a benchmark through benchmarks/registry.py, or are
    handed what is its by the document that calls them."""
    assert not shared_layer_breaches(ROOT / "benchmarks", BENCHMARK_PACKAGES)


def test_the_benchmark_rules_catch_a_planted_breach(tmp_path):
    engine = tmp_path / "engine"
    engine.mkdir()
    (engine / "site.py").write_text(
        'from benchmarks.mmlu import data\n'
        'LOADER = {"benchmarks": ROOT / "benchmarks"}  # the benchmarks it scores\n'
        'PAGE = "benchmarks/gate-widget.html"\n'
        'MODULE = "benchmarks.server.gate_command"\n'
        'TASK = "mmlu_pro"  # MMLU\'s sibling\n'
        'WORDS = "the benchmarks it scores, the documents\' benchmarks"\n')
    found = engine_breaches(engine, ["mmlu", "mmlu_pro"])
    # line 2: the prefix and the path (not the comment's English word); line 5: the string and the comment
    assert [re.search(r":(\d+)", f)[1] for f in found] == ["1", "2", "2", "3", "4", "5", "5"], found
    assert found[0].endswith("imports benchmarks.mmlu")
    shared = tmp_path / "benchmarks"
    (shared / "server").mkdir(parents=True)
    (shared / "mmlu").mkdir()
    (shared / "gate_widget.py").write_text(
        "from . import registry\nfrom .runs import read_run\nfrom .mmlu.live_runs import run_pair\n")
    (shared / "server" / "gate_command.py").write_text(
        "from benchmarks.registry import server\nfrom benchmarks.mmlu_pro import data\nfrom ..mmlu import task\n")
    (shared / "mmlu" / "own.py").write_text("from ..mmlu_pro import data\n")  # a benchmark's own: not the shared layer
    assert [f.split(" imports ")[1] for f in shared_layer_breaches(shared, ["mmlu", "mmlu_pro"])] == [
        "benchmarks.mmlu.live_runs", "benchmarks.mmlu_pro", "benchmarks.mmlu"]
