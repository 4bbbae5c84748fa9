"""The one entry point the browser's Pyodide worker calls: a batch of math calls and widget views.

A call is either ``{"fn": name, "args": {...}}``, a public math function of ``explainers`` (with
``"shown": true`` the result comes back as ``{"value": …, "shown": text}``, the text written by
:func:`widgetkit.words.shown`, as the server's pages write it), or
``{"view": "<document>/<widget>", "state": {...}, "context": {...}}``, a widget's view. The widget is
found by the one registry (:func:`widgetkit.registry.find_widget`), the same module the server
renders from, so both draw the same picture. One JSON string comes in and
one goes out, so a whole batch crosses the JavaScript/Python boundary once.
"""
from __future__ import annotations

import json

from explainers.registry import UnknownFunction, call_public

from .registry import UnknownWidget, find_widget
from .spec import run_view
from .words import shown


def _run(call: object):
    if not isinstance(call, dict):
        raise ValueError('each call must be an object {"fn": name, "args": {...}} or {"view": "document/widget", ...}')
    if isinstance(call.get("view"), str):
        paper, _, name = call["view"].partition("/")
        return run_view(find_widget(paper, name), call.get("state"), call.get("context"))
    if not isinstance(call.get("fn"), str):
        raise ValueError('each call must be an object {"fn": name, "args": {...}} or {"view": "document/widget", ...}')
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
