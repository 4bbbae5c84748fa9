"""What a widget is (:class:`Widget`) and how its view is made (:func:`run_view`).

A widget module (``content/<document>/widgets/<name>.py``) defines one ``WIDGET = Widget(...)``: its
settings schema, an optional ``normalise`` step (checks between settings, e.g. a question number
against the chosen subject's size; it returns a new state, never changes the one it is given), and
its ``view``, which turns a checked state into sentences, an SVG scene and numbers.

``context`` is the data the math does not own (subject sizes from the dataset files, results a
reader loaded). The server provides it, and for widgets drawn in the browser it comes back from the
page on every call, so each key a widget reads is declared with a check, and only declared keys
reach the view.

Every view is also given ``state["width"]``, the width in CSS pixels its figure is drawn for
(``layout.drawn_width`` of the ``width`` the page sent, or the default): a figure is laid out for
the width it is shown at, so that its text keeps its size on a phone (see ``layout``). It is not a
setting: it is never in the canonical query or the returned state.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from explainers import checks

from .layout import drawn_width
from .settings import Param, parse_state, state_query

Check = Callable[[str, object], object]  # (name for messages, value) -> checked value, or ValueError
DRIVERS = ("worker", "server", "live")


def _no_params(context: dict) -> tuple[Param, ...]:
    return ()


@dataclass(frozen=True)
class Widget:
    """One embeddable widget.

    driver: "worker" (the view runs in the reader's browser, in Pyodide, on every input),
    "server" (the view needs data only the server has; the browser asks the widget JSON route), or
    "live" (it shows the server's changing state, e.g. the live model: drawn by its paper's server
    hooks on every request and never kept in a page cache).
    """

    name: str
    title: str
    blurb: str
    height: int  # a good first iframe height in pixels; the embed page reports its real height
    params: Callable[[dict], tuple[Param, ...]] = _no_params
    view: Callable[[dict, dict], dict] | None = None
    normalise: Callable[[dict, dict], tuple[dict, list[str]]] | None = None
    needs: Mapping[str, Check] = field(default_factory=dict)  # context keys the view requires
    accepts: Mapping[str, Check] = field(default_factory=dict)  # context keys it may be given
    driver: str = "worker"
    script: bool = False  # a <name>.js beside the module adds widget-specific behaviour in the page
    style: bool = False  # a <name>.css beside the module styles what only this widget draws
    primary: int = 2  # its first settings, shown under the figure; the rest wait behind "More settings"

    def __post_init__(self):
        if self.driver not in DRIVERS:
            raise ValueError(f"widget {self.name}: driver must be one of {', '.join(DRIVERS)}")
        if self.driver != "live" and self.view is None:
            raise ValueError(f"widget {self.name}: only a live widget may have no view")

    @property
    def module_name(self) -> str:
        return self.name.replace("-", "_")

    def param_dicts(self, context: dict | None = None) -> list[dict]:
        """The settings as plain data (for building the form)."""
        return [p.as_dict() for p in self.params(context or {})]


def checked_context(widget: Widget, context: object) -> dict:
    """The context keys ``widget`` declares, each checked; a missing required key is an error."""
    if context is None:
        context = {}
    context = checks.mapping("context", context, minimum=0)
    checked = {}
    for key, check in (*widget.needs.items(), *widget.accepts.items()):
        if context.get(key) is not None:
            checked[key] = check(f"context.{key}", context[key])
        elif key in widget.needs:
            raise ValueError(f"{widget.name} needs context.{key} (the server provides it)")
    return checked


def run_view(widget: Widget, state: dict | None = None, context: dict | None = None) -> dict:
    """Everything one widget shows for one state: {"widget", "state", "query", "width", "messages",
    "summary", "figure", "numbers", …}. Bad settings never raise; they come back as messages.
    ``state["width"]``, if given, is the width to draw for (not a setting). A bad ``context``
    (the server's data) raises ValueError."""
    context = checked_context(widget, context)
    if state is not None:
        checks.mapping("state", state, minimum=0)
    params = widget.params(context)
    raw = {k: v for k, v in (state or {}).items() if isinstance(v, (str, int, float))}
    clean, messages = parse_state(params, raw)
    if widget.normalise is not None:
        clean, more = widget.normalise(clean, context)
        messages = messages + more
    width, width_messages = drawn_width(raw.get("width"))
    view = widget.view({**clean, "width": width}, context)
    return {
        "widget": widget.name,
        "state": clean,
        "query": state_query(params, clean),
        "width": width,
        "messages": messages + width_messages + view.get("messages", []),
        **{key: value for key, value in view.items() if key != "messages"},
    }
