"""The widget kit: what every interactive widget is made of, standard library only.

It runs unchanged on the server (CPython) and in the reader's browser (Pyodide). A widget module
imports from here: :class:`Widget` (the spec), :class:`Param` (one setting), the scene builder
(:mod:`widgetkit.scene`), the words (:mod:`widgetkit.words`) and the context checks
(:mod:`widgetkit.context`). :func:`run_view` makes a view; :mod:`widgetkit.browser` is the
worker's entry point.
"""
from __future__ import annotations

from .settings import Param, parse_state, state_query
from .spec import Widget, checked_context, run_view

__all__ = ["Param", "Widget", "checked_context", "parse_state", "run_view", "state_query"]
