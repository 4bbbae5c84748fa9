"""Every repository path that README.md and docs/*.md name exists.

A path is what the text writes in backticks or as a link target, starting at one of the
repository's top-level files or folders (``engine/widgets.py``, ``tests/unit/pyodide/``,
``docs/testing.md``): a folder renamed or a module moved without its docs following fails here.
Patterns (``content/<slug>/``, ``sections/*.md``) and paths relative to something else
(``sections/01-intro.md`` inside a document's folder) are not paths of the repository and are left out.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP = {p.name for p in ROOT.iterdir() if not p.name.startswith(".")}
# In backticks, or a Markdown link's target; only the characters a path here is written with.
# Named but not this repository's: where the tests write their screenshots (made by a run), and
# vLLM's and SGLang's documentation pages, which docs/live-scoring.md and security.md cite.
NOT_OURS = {"tests/artifacts/", "docs/usage/security.md", "docs/usage/v1_guide.md",
            "docs/advanced_features/server_arguments.md", "docs/backend/sampling_params.md"}
NAMED = re.compile(r"`(?P<code>[A-Za-z0-9_./-]+)`|\]\((?P<link>[A-Za-z0-9_./-]+)(?:#[^)]*)?\)")


def named_paths(text: str, folder: Path) -> list[str]:
    """The repository paths ``text`` (a Markdown file in ``folder``) names, relative to the root."""
    found = []
    for match in NAMED.finditer(text):
        if match["code"]:
            path = match["code"]
        else:  # a link is relative to the file that holds it
            path = (folder / match["link"]).resolve().relative_to(ROOT).as_posix() if not match["link"].startswith(
                ("http:", "https:")) else ""
        if path.split("/")[0] in TOP and ("/" in path or "." in path):
            found.append(path)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_a_doc_names_exists(doc):
    missing = sorted({path for path in named_paths(doc.read_text(encoding="utf-8"), doc.parent)
                      if not (ROOT / path).exists() and path not in NOT_OURS})
    assert missing == []


def test_the_check_finds_a_missing_path():
    text = "Run `tests/pyodide/` and `engine/widgets.py`; see [testing](docs/testing.md) and `content/<slug>/`."
    paths = named_paths(text, ROOT)
    assert paths == ["tests/pyodide/", "engine/widgets.py", "docs/testing.md"]
    assert [p for p in paths if not (ROOT / p).exists()] == ["tests/pyodide/"]
