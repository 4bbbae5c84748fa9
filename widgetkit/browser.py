"""The one entry point the browser's Pyodide worker calls: a batch of math calls and widget views.

A call is either ``{"fn": name, "args": {...}}``, a public math function of ``explainers`` (with
``"shown": true`` the result comes back as ``{"value": …, "shown": text}``, the text written by
:func:`widgetkit.words.shown`, as the server's pages write it), or
``{"view": "<paper>/<widget>", "state": {...}, "context": {...}}``, a widget's view. The widget is
found by the papers' convention (``papers/<paper>/widgets/<widget>.py`` defines ``WIDGET``), the
same module the server renders from, so both draw the same picture. One JSON string comes in and
one goes out, so a whole batch crosses the JavaScript/Python boundary once.
"""
from __future__ import annotations

import importlib
import json
import re

from explainers.registry import UnknownFunction, call_public

from .spec import Widget, run_view
from .words import shown

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class UnknownWidget(LookupError):
    """No paper has a widget by that name."""


def find_widget(paper: str, name: str) -> Widget:
    """The ``WIDGET`` of ``papers/<paper>/widgets/<name>.py`` (paper and name as in URLs)."""
    if not isinstance(paper, str) or not isinstance(name, str) or not (_NAME.fullmatch(paper) and _NAME.fullmatch(name)):
        raise UnknownWidget("a view is named \"<paper>/<widget>\", both in lower case with dashes")
    module_name = f"papers.{paper.replace('-', '_')}.widgets.{name.replace('-', '_')}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        raise UnknownWidget(f"no widget {paper}/{name}") from None
    widget = getattr(module, "WIDGET", None)
    if not isinstance(widget, Widget) or widget.name != name:
        raise UnknownWidget(f"{module_name} does not define WIDGET for {name!r}")
    return widget


def _run(call: object):
    if not isinstance(call, dict):
        raise ValueError('each call must be an object {"fn": name, "args": {...}} or {"view": "paper/widget", ...}')
    if isinstance(call.get("view"), str):
        paper, _, name = call["view"].partition("/")
        return run_view(find_widget(paper, name), call.get("state"), call.get("context"))
    if not isinstance(call.get("fn"), str):
        raise ValueError('each call must be an object {"fn": name, "args": {...}} or {"view": "paper/widget", ...}')
    result = call_public(call["fn"], call.get("args") or {})
    return {"value": result, "shown": shown(result)} if call.get("shown") is True else result


def run_batch(calls_json: str) -> str:
    """Run a JSON list of calls; return a JSON list of {"result": ...} or {"error": ..., "kind": ...}.

    One failing call does not stop the others.
    """
    results = []
    for call in json.loads(calls_json):
        try:
            results.append({"result": _run(call)})
        except (UnknownFunction, UnknownWidget, ValueError) as error:
            results.append({"error": str(error), "kind": type(error).__name__})
    return json.dumps(results, allow_nan=False)
