"""The math core page: the page's worked examples, computed by the server and again by the reader's browser.

It shows readers (and tests, and the start-up benchmark) that the browser runs the very same
Python as the server: each row carries its arguments and the server's result, and
static/js/math-core-page.js recomputes them all in Pyodide (results written by the same
``widgetkit.words.shown``) and marks whether they match.
"""
from __future__ import annotations

from flask import Blueprint, current_app, render_template

from explainers.registry import call_public
from widgetkit.words import shown

bp = Blueprint("math_core_page", __name__)

def examples() -> list[tuple[str, dict, str]]:
    """Every document's worked examples (its server hooks' ``math_examples``), document by document."""
    found = []
    for document in current_app.extensions["documents"].values():
        found += document.hooks.math_examples() if document.hooks.math_examples else []
    return found


def shown_args(args: dict) -> str:
    return ", ".join(f"{name}={shown(value)}" for name, value in args.items())


@bp.get("/math-core")
def math_core():
    rows = [
        {"fn": fn, "args": args, "source": source, "shown_args": shown_args(args),
         "result": (result := call_public(fn, args)), "shown": shown(result)}
        for fn, args, source in examples()
    ]
    return render_template("math_core.html", rows=rows)
