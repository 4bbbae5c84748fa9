"""Run a page's Python snippet the way the tests do, for the reader's "Edit and run" (in Pyodide).

A snippet states a result with a line ``<expression>  # → <repr>``. :func:`run_snippet` executes
the lines before each such line in one fresh namespace, then evaluates the expression and records
its ``repr``. The page's own results come from the snippet as published (``page_code``), so an
edited snippet is compared with what the page printed, not with the reader's edited comments.

tests/documents/test_snippets.py runs every snippet of every document through this function too, so the
editor's Run and the tests agree.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import traceback

RESULT_LINE = re.compile(r"^(?P<expression>.*?\S)\s+# → (?P<result>.*)$")
FILENAME = "<snippet>"
MAX_OUTPUT = 20_000  # characters of print() output kept


def split_result(line: str) -> tuple[str, str] | None:
    """``(expression, shown repr)`` for a line ``expression  # → repr``, else None."""
    match = RESULT_LINE.match(line)
    return (match.group("expression"), match.group("result").strip()) if match else None


def stated_results(code: str) -> list[dict]:
    """The results a snippet states: its line number, expression and shown repr, in order."""
    found = []
    for number, line in enumerate(code.split("\n"), 1):
        stated = split_result(line)
        if stated is not None:
            found.append({"line": number, "expression": stated[0].strip(), "shown": stated[1]})
    return found


def short_error(error: BaseException) -> dict:
    """A Python error as one readable line and the snippet line it happened on."""
    line = None
    if isinstance(error, SyntaxError) and error.filename == FILENAME:
        line = error.lineno
        message = f"SyntaxError: {error.msg}"
    else:
        for frame in traceback.extract_tb(error.__traceback__):
            if frame.filename == FILENAME:
                line = frame.lineno
        message = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()[-1]
    return {"message": message, "line": line}


def run_snippet(code: str, page_code: str | None = None) -> dict:
    """Run ``code``; return its results, printed output and error, and the page's results to compare."""
    namespace: dict = {"__name__": "__snippet__"}
    results: list[dict] = []
    output = io.StringIO()
    error = None
    pending: list[str] = []
    start = 1

    def execute() -> None:
        # Leading newlines keep the snippet's own line numbers in a traceback.
        source = "\n" * (start - 1) + "\n".join(pending)
        exec(compile(source, FILENAME, "exec"), namespace)

    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            for number, line in enumerate(code.split("\n"), 1):
                stated = split_result(line)
                if stated is None or line != line.lstrip():
                    pending.append(line)
                    continue
                expression, shown = stated
                execute()
                pending, start = [], number + 1
                value = eval(compile("\n" * (number - 1) + expression, FILENAME, "eval"), namespace)
                results.append({"line": number, "expression": expression.strip(), "shown": shown,
                                "actual": repr(value)})
            execute()
        except (Exception, SystemExit) as caught:  # noqa: BLE001 - any error of the reader's code is shown
            error = short_error(caught)
    printed = output.getvalue()
    if len(printed) > MAX_OUTPUT:
        printed = printed[:MAX_OUTPUT] + "\n… (output cut)"
    page = stated_results(code if page_code is None else page_code)
    actual = [result["actual"] for result in results]
    same = error is None and actual == [result["shown"] for result in page]
    return {"results": results, "output": printed, "error": error, "page": page, "same": same}


def run_snippet_json(code: str, page_code: str | None = None) -> str:
    """:func:`run_snippet` as one JSON string (one crossing of the Pyodide boundary)."""
    return json.dumps(run_snippet(code, page_code))


if __name__ == "__main__":  # python -m widgetkit.snippets < snippet.py
    print(json.dumps(run_snippet(sys.stdin.read()), indent=2))
