"""benchmarks/ names no document, by import or by string (benchmarks/README.md states the rule).

A benchmark is shared by every document that shows it; a document reaches it through its hooks, so
renaming or removing a document folder must not break anything under benchmarks/. Checked in every
text file there (code, templates, READMEs; the run files are data):

* an import of, or a string naming, a document's package (``documents.<slug>``) or the documents
  the app has loaded (``extensions["documents"]``);
* a ``content/`` path, or a document's template or asset path (``<slug>/widgets/…``, ``<slug>/server/…``);
* a route under a document's URL prefix (a string starting ``/<slug>/`` or equal to ``/<slug>``);
* the slugs themselves as words where they are not also a benchmark's name (``mmlu`` is MMLU's name
  too, so for it only the routes and paths above count).

Two uses of those words name something else and are allowed, each with its reason in
:data:`NOT_A_DOCUMENT`.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT_SUFFIXES = {".py", ".html", ".md", ".js", ".css", ".toml", ".json", ".txt"}

# Words that contain a document's slug but name no document.
NOT_A_DOCUMENT = {
    # the dataset's folder in the project's shared data layout (../shared/data/mmlu-pro, MMLU_PRO_DATA_DIR)
    "data/mmlu-pro": "the dataset folder",
    # evaluate's default output file for MMLU-Pro (a command line's default, kept as it was)
    "mmlu-pro-results.jsonl": "a file name",
}


def slugs(content: Path = ROOT / "content") -> list[str]:
    return sorted(p.parent.name for p in content.glob("*/paper.toml"))


def benchmark_names(benchmarks: Path = ROOT / "benchmarks") -> set[str]:
    """The benchmarks' names (their packages: mmlu, mmlu_pro); a document slug that is one of them
    (mmlu) is checked only as a route or a path."""
    return {p.parent.name for p in benchmarks.glob("*/task.py")}


def patterns(document_slugs: list[str], benchmark_words: set[str]) -> list[tuple[str, re.Pattern]]:
    """(what it is, pattern) for every way of naming a document."""
    found = [("a document package", re.compile(r"\bdocuments\.[a-z_]+")),
             ("the loaded documents", re.compile(r"extensions\[[\"']documents[\"']\]")),
             ("a content/ path", re.compile(r"(?<![\w/.-])content/"))]
    for slug in document_slugs:
        s = re.escape(slug)
        # (benchmarks/mmlu/server/ is MMLU's own folder: a document's server/ counts by its templates)
        found.append((f"{slug}'s template or asset path",
                      re.compile(rf"(?<![\w/.-]){s}/((widgets|sections|diagrams)/|server/[\w-]+\.html)")))
        found.append((f"a route under /{slug}/", re.compile(rf"[\"'`(]/{s}(/|[\"'`)])")))
        if slug not in benchmark_words:
            found.append((f"the slug {slug}", re.compile(rf"(?<![\w-]){s}(?![\w])")))
    return found


def breaches(folder: Path, document_slugs: list[str], benchmark_words: set[str]) -> list[str]:
    """Every place under ``folder`` that names a document, as "path:line: what"."""
    checks = patterns(document_slugs, benchmark_words)
    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES or "__pycache__" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for allowed in NOT_A_DOCUMENT:
                line = line.replace(allowed, "")
            found += [f"{path.relative_to(folder.parent)}:{number}: {what}"
                      for what, pattern in checks if pattern.search(line)]
    return found


def test_benchmarks_name_no_document():
    assert not breaches(ROOT / "benchmarks", slugs(), benchmark_names())


@pytest.mark.parametrize("planted, what", [
    ("from documents.mmlu_pro.widgets import x\n", "a document package"),
    ("d = current_app.extensions['documents']['mmlu']\n", "the loaded documents"),
    ('PAGE = "content/scoring-lesson/sections/01.md"\n', "a content/ path"),
    ('render_template("mmlu/server/run-page.html")\n', "mmlu's template or asset path"),
    ('@bp.route("/mmlu/run")\n', "a route under /mmlu/"),
    ('url = "/mmlu-pro/run"\n', "a route under /mmlu-pro/"),
    ('DOCUMENT = "scoring-lesson"\n', "the slug scoring-lesson"),
    ("<code>python -m engine scoring-lesson gate</code>\n", "the slug scoring-lesson"),
])
def test_the_check_finds_a_planted_breach(tmp_path, planted, what):
    """The check is not vacuous: each way of naming a document, planted in a benchmark, is reported;
    the benchmark's own name and the dataset's folder are not."""
    package = tmp_path / "benchmarks" / "toy"
    package.mkdir(parents=True)
    (package / "task.py").write_text('NAME = "mmlu"\nDATA = "../shared/data/mmlu-pro"\n')
    assert breaches(tmp_path / "benchmarks", ["mmlu", "mmlu-pro", "scoring-lesson"], {"mmlu"}) == []
    (package / "planted.py").write_text(planted)
    assert what in [b.split(": ", 1)[1] for b in breaches(tmp_path / "benchmarks", ["mmlu", "mmlu-pro", "scoring-lesson"],
                                                          {"mmlu"})]
