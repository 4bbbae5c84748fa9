"""Every Python snippet on the annotated pages runs, and prints exactly the results it shows.

A snippet states a result with a line ``<expression>  # → <repr>``. The snippet runs line by
line in a fresh namespace: the lines before each such line are executed, then the expression
is evaluated and its repr must equal the text after the arrow. A snippet whose result changes
fails here, and so does one that states no result at all.

A reader can also run a snippet in the page (Pyodide, with the browser wheel): each one either
imports only what the wheel and Pyodide's standard library hold, or is marked server-only with a
reason (```` ```python server: … ````), and then the page offers no Run. tests/browser/snippets.test.mjs
runs every runnable snippet of every document in the browser.
"""
from __future__ import annotations

import ast
import html
import io
import re
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import documents

from content_helpers import fixture_document, rendered_document
from engine.markdown_ext import ContentError, Glossary, PageRefs, render_markdown, split_result

SLUGS = documents()  # every document in content/, the scoring lesson too


def run_snippet(code: str) -> int:
    """Run ``code`` as described above; return how many stated results it checked."""
    namespace: dict = {"__name__": "__snippet__"}
    pending: list[str] = []
    start = 1
    checked = 0

    def execute() -> None:
        # Leading newlines keep the snippet's own line numbers in any traceback.
        source = "\n" * (start - 1) + "\n".join(pending)
        exec(compile(source, "<snippet>", "exec"), namespace)

    for number, line in enumerate(code.split("\n"), 1):
        stated = split_result(line)
        if stated is None:
            assert "# →" not in line, f"line {number}: write a result as `expression  # → repr`"
            pending.append(line)
            continue
        expression, expected = stated
        assert expression == expression.lstrip(), f"line {number}: a stated result must not be indented"
        execute()
        pending, start = [], number + 1
        actual = repr(eval(compile(expression, f"<snippet line {number}>", "eval"), namespace))
        assert actual == expected, f"line {number}: {expression.strip()} gives {actual}, the page shows {expected}"
        checked += 1
    execute()
    return checked


@pytest.mark.parametrize("slug", SLUGS)
def test_the_paper_has_snippets_in_many_sections(slug, real_app):
    assert len({snippet.section_id for snippet in rendered_document(real_app, slug).refs.snippets}) >= 5


# The snippets are only known once a page is rendered, so one test per document runs them all
# (collection builds no app) and names every snippet that fails.
@pytest.mark.parametrize("slug", SLUGS)
def test_every_snippet_shows_what_it_computes(slug, real_app):
    failures = []
    for i, snippet in enumerate(rendered_document(real_app, slug).refs.snippets):
        try:
            assert run_snippet(snippet.code) >= 1, "every snippet must state at least one result (# → …)"
        except Exception as error:  # noqa: BLE001 - reported below, with the snippet's place
            failures.append(f"{slug}:{snippet.section_id}-{i}: {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("slug", SLUGS)
def test_the_page_shows_exactly_the_snippets_that_were_run(slug, real_app):
    page = real_app.test_client().get(f"/{slug}/").get_data(as_text=True)
    shown = [
        html.unescape(re.sub(r"<[^>]+>", "", block))
        for block in re.findall(r'<code class="language-python">(.*?)</code>', page, re.S)
    ]
    assert shown == [snippet.code for snippet in rendered_document(real_app, slug).refs.snippets]


def test_a_changed_result_fails():
    code = fixture_document().refs.snippets[0].code
    assert run_snippet(code) == 1
    with pytest.raises(AssertionError, match="gives 0.0433, the page shows 0.0434"):
        run_snippet(code.replace("# → 0.0433", "# → 0.0434"))


def test_multi_line_statements_run_before_a_stated_result():
    code = fixture_document().refs.snippets[1].code
    assert "for w in words:" in code
    assert run_snippet(code) == 2


def test_a_snippet_with_no_stated_result_is_caught():
    assert run_snippet("x = 1\ny = x + 1") == 0


@pytest.mark.parametrize("slug", SLUGS)
def test_the_editors_runner_agrees_with_the_page_on_every_snippet(slug, real_app):
    """The reader's "Edit and run" (widgetkit.snippets, in Pyodide) runs the same text: unedited, every
    snippet gives exactly the results the page shows, with no error."""
    from widgetkit.snippets import run_snippet as run_in_editor

    snippets = rendered_document(real_app, slug).refs.snippets
    assert snippets
    for snippet in snippets:
        ran = run_in_editor(snippet.code)
        assert ran["error"] is None and ran["same"], (snippet.section_id, ran)
        assert len(ran["results"]) == len(ran["page"]) >= 1


def test_the_editors_runner_reports_changes_and_errors():
    from widgetkit.snippets import run_snippet as run_in_editor
    page = "n = 100\nn * 2  # → 200"
    changed = run_in_editor("n = 1000\nn * 2  # → 200", page)
    assert not changed["same"] and changed["results"][0]["actual"] == "2000" and changed["page"][0]["shown"] == "200"
    broken = run_in_editor("n = 100\nx = n / 0\nn * 2  # → 200", page)
    assert broken["error"] == {"message": "ZeroDivisionError: division by zero", "line": 2}
    assert run_in_editor("print('hi')\n1 + 1  # → 2")["output"] == "hi\n"


# Pyodide's standard library is CPython's less what its documentation lists as removed
# (https://pyodide.org/en/stable/usage/wasm-constraints.html): a snippet that imports one fails in the page.
PYODIDE_REMOVED = {"curses", "dbm", "ensurepip", "idlelib", "lib2to3", "tkinter", "turtle", "turtledemo", "venv"}
BROWSER_STDLIB = set(sys.stdlib_module_names) - PYODIDE_REMOVED


def wheel_modules(app) -> set[str]:
    """The dotted names of every module and package the browser wheel holds (what Pyodide can import)."""
    names = set()
    for path in zipfile.ZipFile(io.BytesIO(app.extensions["browser_wheel"].data)).namelist():
        if path.endswith(".py"):
            names.add(path.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
    return names


def missing_in_browser(code: str, wheel: set[str]) -> list[str]:
    """The modules ``code`` imports that neither the wheel nor Pyodide's standard library holds."""
    missing = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            wanted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # ``from package import name``: the package must be there; ``name`` may be a module of it
            # (then in the wheel too, if the package is the wheel's) or anything the package defines.
            wanted = [node.module]
        else:
            continue
        for module in wanted:
            if module.split(".")[0] in BROWSER_STDLIB or module in wheel:
                continue
            missing.append(module)
    return missing


@pytest.mark.parametrize("slug", SLUGS)
def test_every_snippet_runs_in_the_browser_or_says_why_not(slug, real_app):
    """A snippet with Run imports only what the browser has; a server-only one gives its reason and
    really needs the server (the mark is not a way to hide a snippet the page could run)."""
    wheel = wheel_modules(real_app)
    wrong = []
    for i, snippet in enumerate(rendered_document(real_app, slug).refs.snippets):
        missing = missing_in_browser(snippet.code, wheel)
        if missing and not snippet.server_only:
            wrong.append(f"{slug}:{snippet.section_id}-{i}: imports {', '.join(missing)}, which the browser "
                         "lacks: make it run from the wheel, or mark it ```python server: <why>")
        elif snippet.server_only and not missing:
            wrong.append(f"{slug}:{snippet.section_id}-{i}: marked server-only but imports nothing the browser lacks")
    assert not wrong, "\n".join(wrong)


def test_the_import_check_knows_the_wheel_from_the_server(real_app):
    wheel = wheel_modules(real_app)
    assert {"explainers", "benchmarks.mmlu_pro.prompt", "documents.mmlu_pro.figures"} <= wheel
    assert missing_in_browser("from collections import Counter\nimport re, math\nfrom explainers import softmax", wheel) == []
    assert missing_in_browser("from benchmarks.mmlu_pro import prompt", wheel) == []
    assert missing_in_browser(
        "from benchmarks.mmlu_pro.server.reader import MMLUProData\nfrom benchmarks.mmlu_pro.server import data_dir\n"
        "import numpy\nimport tkinter", wheel) == [
        "benchmarks.mmlu_pro.server.reader", "benchmarks.mmlu_pro.server", "numpy", "tkinter"]


@pytest.mark.parametrize("slug", SLUGS)
def test_a_server_only_snippet_shows_its_reason_and_no_run(slug, real_app):
    """site.js gives "Edit and run" to every snippet but those marked data-runs="server"."""
    page = real_app.test_client().get(f"/{slug}/").get_data(as_text=True)
    marked = re.findall(r'<div class="snippet" data-runs="server"><p class="snippet-label">Python '
                        r'<span class="snippet-where">Runs on the server: ([^<]+)</span></p>', page)
    snippets = rendered_document(real_app, slug).refs.snippets
    assert [html.unescape(reason) for reason in marked] == [s.server_only for s in snippets if s.server_only]
    assert page.count('<div class="snippet">') == sum(not s.server_only for s in snippets)


def test_a_fence_says_server_and_why_or_nothing():
    refs = PageRefs(Glossary({}, {}), "/glossary/", Path("."), section_id="s")
    page = render_markdown("```python server: it reads the dataset's files\n1 + 1  # → 2\n```", refs)
    assert refs.snippets[0].server_only == "it reads the dataset's files"
    assert "Runs on the server: it reads the dataset&#39;s files" in page
    render_markdown("```python\n1 + 1  # → 2\n```", refs)
    assert refs.snippets[1].server_only == ""
    for info in ("server", "server:", "server:   ", "runs-on-server: x"):
        with pytest.raises(ContentError, match=r"section 's': .*```python server: <why"):
            render_markdown(f"```python {info}\n1 + 1  # → 2\n```", refs)
