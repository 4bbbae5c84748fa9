"""Every Python snippet on the annotated pages runs, and prints exactly the results it shows.

A snippet states a result with a line ``<expression>  # → <repr>``. The snippet runs line by
line in a fresh namespace: the lines before each such line are executed, then the expression
is evaluated and its repr must equal the text after the arrow. A snippet whose result changes
fails here, and so does one that states no result at all.
"""
from __future__ import annotations

import html
import re

import pytest
from conftest import documents

from content_helpers import fixture_paper, paper_of
from engine.markdown_ext import split_result

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
    assert len({snippet.section_id for snippet in paper_of(real_app, slug).refs.snippets}) >= 5


# The snippets are only known once a page is rendered, so one test per document runs them all
# (collection builds no app) and names every snippet that fails.
@pytest.mark.parametrize("slug", SLUGS)
def test_every_snippet_shows_what_it_computes(slug, real_app):
    failures = []
    for i, snippet in enumerate(paper_of(real_app, slug).refs.snippets):
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
    assert shown == [snippet.code for snippet in paper_of(real_app, slug).refs.snippets]


def test_a_changed_result_fails():
    code = fixture_paper().refs.snippets[0].code
    assert run_snippet(code) == 1
    with pytest.raises(AssertionError, match="gives 0.0433, the page shows 0.0434"):
        run_snippet(code.replace("# → 0.0433", "# → 0.0434"))


def test_multi_line_statements_run_before_a_stated_result():
    code = fixture_paper().refs.snippets[1].code
    assert "for w in words:" in code
    assert run_snippet(code) == 2


def test_a_snippet_with_no_stated_result_is_caught():
    assert run_snippet("x = 1\ny = x + 1") == 0


@pytest.mark.parametrize("slug", SLUGS)
def test_the_editors_runner_agrees_with_the_page_on_every_snippet(slug, real_app):
    """The reader's "Edit and run" (widgetkit.snippets, in Pyodide) runs the same text: unedited, every
    snippet gives exactly the results the page shows, with no error."""
    from widgetkit.snippets import run_snippet as run_in_editor

    snippets = paper_of(real_app, slug).refs.snippets
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
