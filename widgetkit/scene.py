"""Tiny SVG scene builder for the interactive widgets.

A figure is plain data: {"width", "height", "label", "marks"}, each mark
{"tag", "attrs", "text", "children"}. The server turns it into inline SVG with one Jinja macro and
the browser patches the same data into the live SVG, so the drawing exists once, in Python, and
runs unchanged in CPython and in Pyodide. Coordinates are rounded strings so both sides emit the
same characters. A figure is drawn for a width (see ``layout``): the helpers here that take one
(axes, rows of named bars, legends) fit their text into it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .layout import GAP, Box, baseline_below, line_height, text_box, text_width, ticks, type_of, wrap
from .settings import LOG_STEP, Param


def num(value: float) -> str:
    """A coordinate as text: one decimal, no trailing ".0" noise ("12.5", "40")."""
    rounded = round(float(value), 1)
    if rounded == int(rounded):
        return str(int(rounded))
    return f"{rounded:.1f}"


def mark(tag: str, attrs: dict | None = None, text: str | None = None, children: list | None = None) -> dict:
    """One SVG element; numeric attributes are turned into text here, once."""
    shown = {}
    for key, value in (attrs or {}).items():
        if value is None:
            continue
        shown[key] = num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
    return {"tag": tag, "attrs": shown, "text": text, "children": children or []}


def figure(width: int, height: int, label: str, marks: list[dict], role: str = "img") -> dict:
    """A whole drawing; ``label`` is its accessible name (the text summary says the rest).

    role="img" for a picture read as a whole; "group" when it holds focusable points.
    """
    return {"width": width, "height": height, "label": label, "marks": marks, "role": role}


class Linear:
    """Map a data range onto a pixel range (either direction)."""

    def __init__(self, domain: tuple[float, float], pixels: tuple[float, float]):
        self.d0, self.d1 = domain
        self.p0, self.p1 = pixels

    def __call__(self, value: float) -> float:
        share = (value - self.d0) / (self.d1 - self.d0)
        return self.p0 + share * (self.p1 - self.p0)


class Log10(Linear):
    """A logarithmic axis: each power of ten gets the same length."""

    def __init__(self, domain: tuple[float, float], pixels: tuple[float, float]):
        super().__init__((math.log10(domain[0]), math.log10(domain[1])), pixels)

    def __call__(self, value: float) -> float:
        return super().__call__(math.log10(value))


def title(text: str) -> dict:
    """A tooltip for the enclosing element (hover) that screen readers also read."""
    return mark("title", text=text)


def hline(x0: float, x1: float, y: float, cls: str) -> dict:
    return mark("line", {"x1": x0, "x2": x1, "y1": y, "y2": y, "class": cls})


def vline(x: float, y0: float, y1: float, cls: str) -> dict:
    return mark("line", {"x1": x, "x2": x, "y1": y0, "y2": y1, "class": cls})


def label(x: float, y: float, text: str, cls: str = "fig-label", anchor: str = "middle") -> dict:
    """A text at baseline ``y``, in its class's type (layout.TYPE), which its box is measured in."""
    size, bold = type_of(cls)
    return mark("text", {"x": x, "y": y, "class": cls, "text-anchor": anchor, "font-size": size,
                         "font-weight": "bold" if bold else None}, text)


def rect(x0: float, x1: float, y0: float, y1: float, cls: str, tip: str | None = None) -> dict:
    """A rectangle between two x and two y positions, in any order."""
    return mark(
        "rect",
        {"x": min(x0, x1), "y": min(y0, y1), "width": abs(x1 - x0), "height": abs(y1 - y0), "class": cls},
        children=[title(tip)] if tip else None,
    )


def whisker(x: float, y0: float, y1: float, cls: str = "fig-whisker", cap: float = 5) -> dict:
    """A vertical error bar with caps, from y0 to y1."""
    return mark("g", {"class": cls}, children=[
        vline(x, y0, y1, ""), hline(x - cap, x + cap, y0, ""), hline(x - cap, x + cap, y1, ""),
    ])


def hwhisker(x0: float, x1: float, y: float, cls: str = "fig-whisker", cap: float = 5) -> dict:
    """A horizontal error bar with caps, from x0 to x1."""
    return mark("g", {"class": cls}, children=[
        hline(x0, x1, y, ""), vline(x0, y - cap, y + cap, ""), vline(x1, y - cap, y + cap, ""),
    ])


HANDLE_TARGET = 24  # the least width and height a handle's grip takes pointers over (WCAG 2.5.8)
KNOB_RADIUS = 7  # a handle's knob: a slider's thumb, as a reader knows it from any form


def knob(x: float, y: float, axis: str = "x") -> dict:
    """What says a mark can be dragged: a round thumb in the background colour with a rim, and two
    ridges across the way it moves (upright for a handle moved left and right). Legends draw the
    same thumb (swatch "knob")."""
    r, ridge = KNOB_RADIUS, KNOB_RADIUS / 2
    ridges = ([vline(x + dx, y - ridge, y + ridge, "fig-knob-ridge") for dx in (-2, 2)] if axis == "x" else
              [hline(x - ridge, x + ridge, y + dy, "fig-knob-ridge") for dy in (-2, 2)])
    return mark("g", {"class": "fig-knob"}, children=[
        mark("circle", {"cx": x, "cy": y, "r": r, "class": "fig-knob-face"}), *ridges])


def handle(param: Param, value: float, shown: str, stops: list[tuple[float, float]], grip: Box,
           children: list[dict], *, at: tuple[float, float], hint: str | None = None, axis: str = "x", key: str | None = None,
           label: str | None = None, items: list[int] | None = None) -> dict:
    """A mark a reader drags (pointer or touch) or keys (arrows, Page Up/Down, Home, End) to set
    the form control named ``param.name``: a slider in the figure (static/js/widgets/draggable-mark.js
    makes it move; without JavaScript the form below the figure stays the way to change it).

    ``stops``: (pixel along ``axis``, value) pairs, at least two, in order along the axis; between
    two the value is linear in the pixel, so a scale that is not linear in the value (a band's edge
    against the number of questions) is given as enough stops. ``grip``: the box a pointer grabs,
    widened here to HANDLE_TARGET each way about its middle and to take in the knob; it is also
    where the focus ring is drawn. ``children``: the mark's own drawing, under its knob, drawn at
    ``at`` (the thumb that shows it can be dragged). ``hint``: for a figure's main handle, the words a
    reader is shown beside its knob until they first use a handle (draggable-mark.js), as "drag
    the dot to set the score".
    ``items``: for a list setting ("numbers"), the indices of the values this mark stands for:
    their mean is ``value`` and moving it shifts them all alike. ``key`` tells the figure's handles
    apart (so a redraw keeps the one in use); the setting's name by default. A figure holding
    handles has role "group".
    """
    middle_x, middle_y = (grip.x0 + grip.x1) / 2, (grip.y0 + grip.y1) / 2
    # Around its middle (which maps to the value) the grip reaches the knob, and at least HANDLE_TARGET.
    half_w = max(grip.x1 - grip.x0, HANDLE_TARGET, 2 * (abs(at[0] - middle_x) + KNOB_RADIUS)) / 2
    half_h = max(grip.y1 - grip.y0, HANDLE_TARGET, 2 * (abs(at[1] - middle_y) + KNOB_RADIUS)) / 2
    ring = mark("rect", {"x": middle_x - half_w, "y": middle_y - half_h, "width": 2 * half_w, "height": 2 * half_h,
                         "rx": 4, "class": "fig-grip"})
    return mark("g", {
        "class": "fig-handle", "role": "slider", "tabindex": "0",
        "aria-label": label or param.label, "aria-orientation": "vertical" if axis == "y" else "horizontal",
        "aria-valuemin": f"{param.minimum:g}", "aria-valuemax": f"{param.maximum:g}",
        "aria-valuenow": f"{value:.6g}", "aria-valuetext": shown,
        "data-drives": param.name, "data-mark": key or param.name, "data-axis": axis,
        "data-stops": " ".join(f"{num(pixel)}:{v:.6g}" for pixel, v in stops),
        "data-step": f"{param.step:g}", "data-scale": "log" if param.scale == "log" else None,
        "data-log-step": f"{LOG_STEP:g}" if param.scale == "log" else None,
        "data-items": " ".join(str(i) for i in items) if items is not None else None,
        "data-hint": hint,
    }, children=[ring, *children, knob(*at, axis)])


PERCENT_WIDTH = text_width("100%")  # the widest tick label of a percentage axis
X_AXIS_OVERHANG = PERCENT_WIDTH / 2 + GAP  # how far its end labels reach past a horizontal axis's ends
Y_AXIS_WIDTH = PERCENT_WIDTH + 8 + GAP  # room a vertical percentage axis needs left of its line


def percent_axis_x(scale: Linear, y: float, step: int = 10) -> list[dict]:
    """A horizontal 0–100 % axis with ticks and labels under it, every ``step`` % where the labels
    have room (coarser where they do not)."""
    return percent_axis_part(scale, y, 0, 100, step)


def percent_axis_part(scale: Linear, y: float, low: int, high: int, step: int) -> list[dict]:
    """A horizontal axis from low % to high %, a tick every ``step`` % or as few more as the labels need."""
    marks = [hline(scale(low / 100), scale(high / 100), y, "fig-axis")]
    steps = tuple(s for s in (step, 2 * step, 2.5 * step, 5 * step, 10 * step) if s <= high - low)
    for tick in ticks(low, high, abs(scale(high / 100) - scale(low / 100)), PERCENT_WIDTH, steps):
        x = scale(tick / 100)
        marks.append(vline(x, y, y + 5, "fig-axis"))
        marks.append(label(x, y + 18, f"{tick:g}%", "fig-tick"))
    return marks


def percent_axis_y(scale: Linear, x0: float, x1: float, step: int = 25, gridlines: bool = True) -> list[dict]:
    """A vertical 0–100 % axis on the left with light grid lines across the plot."""
    marks = [vline(x0, scale(0), scale(1), "fig-axis")]
    for tick in ticks(0, 100, abs(scale(1) - scale(0)), line_height(), (step, 2 * step, 50, 100)):
        y = scale(tick / 100)
        if gridlines and tick:
            marks.append(hline(x0, x1, y, "fig-grid"))
        marks.append(hline(x0 - 5, x0, y, "fig-axis"))
        marks.append(label(x0 - 8, y + 4, f"{tick:g}%", "fig-tick", "end"))
    return marks


def caption(x: float, top: float, width: float, text: str, anchor: str = "middle") -> tuple[list[dict], float]:
    """A caption broken into lines no wider than ``width``, its first line's box at ``top``;
    returns its marks and the bottom of its last line."""
    step = line_height("fig-caption") + 1
    lines = wrap(text, width, "fig-caption")
    marks = [label(x, baseline_below(top + i * step, "fig-caption"), line, "fig-caption", anchor)
             for i, line in enumerate(lines)]
    return marks, top + len(lines) * step


def swatch(kind: str, x: float, middle: float, cls: str) -> dict:
    """A legend's sample of a mark, 14 units wide from ``x``: "box" (a bar), "dot", "line",
    "square" (a small square marker), "whisker" (a band's span) or "knob" (a handle's thumb: the
    class is not used)."""
    if kind == "dot":
        return mark("circle", {"cx": x + 7, "cy": middle, "r": 5, "class": cls})
    if kind == "line":
        return hline(x, x + 14, middle, cls)
    if kind == "square":
        return mark("rect", {"x": x + 3, "y": middle - 4, "width": 8, "height": 8, "class": cls})
    if kind == "whisker":
        return hwhisker(x, x + 14, middle, cls, cap=4)
    if kind == "knob":
        return knob(x + 7, middle)
    return rect(x, x + 14, middle - 5, middle + 5, cls)


def key(marks: list[dict]) -> dict:
    """A chart's key: its legend, or the labels that name its series where they are drawn. Every
    chart has one (the layout test looks for the ``fig-key`` group and checks its text is seen)."""
    return mark("g", {"class": "fig-key"}, children=marks)


LEADER = 6  # how far right of ``x`` direct labels start: room for the leader to a moved one


def direct_labels(items: list[tuple[float, str]], x: float, cls: str = "fig-tick") -> dict:
    """Names written beside the ends of a chart's lines, each at its line's height ``y`` or moved
    down or up just enough to clear the names already placed: ``items`` are (y, name) pairs. A name
    moved off its line's height is joined to the line's end (just left of ``x``) by a leader, so it
    is still read as that line's; names start LEADER right of ``x``."""
    step = line_height(cls) + 1
    placed: list[float] = []
    marks = []
    for y, name in sorted(items):
        baseline = y + 4
        for shift in [0] + [d * sign for d in range(2, 200, 2) for sign in (1, -1)]:
            if all(abs(baseline + shift - other) >= step for other in placed):
                baseline += shift
                break
        placed.append(baseline)
        if abs(baseline - 4 - y) > 2:
            marks.append(mark("line", {"x1": x - 3, "y1": y, "x2": x + LEADER - 1, "y2": baseline - 4, "class": "fig-leader"}))
        marks.append(label(x + LEADER, baseline, name, cls, "start"))
    return key(marks)


def legend(items: list[tuple[str, str, str]], x0: float, top: float, width: float) -> tuple[list[dict], float]:
    """A legend of (swatch kind, swatch class, words) items, flowing in rows no wider than
    ``width`` from ``x0``. Returns its marks and its bottom."""
    marks: list[dict] = []
    x, row = x0, top
    step = line_height() + 4
    for kind, cls, words in items:
        wide = 20 + text_width(words)
        if x > x0 and x + wide > x0 + width:
            x, row = x0, row + step
        marks += [swatch(kind, x, row + step / 2, cls), label(x + 20, baseline_below(row + 2), words, "fig-tick", "start")]
        x += wide + 3 * GAP
    return [key(marks)], row + step


BESIDE_FROM = 400  # the narrowest frame in which rows' names may go beside them


@dataclass(frozen=True)
class Rows:
    """Horizontal rows of a chart, each with a name: beside its row, right-aligned in a column of
    names, where the widest fits in ``share`` of the width and the frame is wider than a phone's
    (BESIDE_FROM); else on a line of its own above it. Every phone, and the picture a phone is
    first shown (layout.NARROW_WIDTH), thus gets the same layout, so redrawing for the phone's own
    width does not move what follows the figure.

    ``x0``–``x1`` is the plot's span; a row's mark starts ``name_height`` below the row's top.
    """

    beside: bool
    name_end: float  # beside: where names end
    x0: float
    x1: float
    name_height: float  # above: the line a name takes over its row

    @classmethod
    def fit(cls, names: list[str], width: float, *, right: float = X_AXIS_OVERHANG, share: float = 0.42,
            left: float = X_AXIS_OVERHANG, beside_from: float = BESIDE_FROM) -> Rows:
        widest = max(text_width(name) for name in names)
        if width >= beside_from and GAP + widest + 8 <= share * width:
            return cls(True, GAP + widest, GAP + widest + 8, width - right, 0)
        return cls(False, left, left, width - right, line_height() + 2)

    def name(self, top: float, mark_height: float, text: str) -> dict:
        """The name of the row whose top is at ``top`` (its mark ``mark_height`` tall). Above its
        row, a name is haloed in the background colour: the plot's reference lines cross it."""
        if self.beside:
            return label(self.name_end, top + mark_height / 2 + 4, text, "fig-tick fig-key", "end")
        return label(self.x0, baseline_below(top), text, "fig-tick fig-halo fig-key", "start")


class Placer:
    """Puts labels where they fit: each takes the first of its candidate spots that lies inside
    the figure and keeps GAP from every text placed before it (and from the boxes it starts with)."""

    def __init__(self, width: float, height: float = math.inf, taken: tuple[Box, ...] = ()):
        self.width, self.height = width, height
        self.taken = list(taken)

    @property
    def bottom(self) -> float:
        """The lowest edge of the texts placed (0 before any)."""
        return max((box.y1 for box in self.taken), default=0)

    def free(self, box: Box) -> bool:
        return box.inside(self.width, self.height) and not any(box.meets(other, GAP - 0.5) for other in self.taken)

    def near(self, text: str, cls: str, x: float, baselines: list[float]) -> dict:
        """``text`` centred on ``x`` (moved in as far as the figure's edges need) on the first of
        ``baselines`` where it fits, or on the last if none does (the layout tests then name the clash)."""
        half = text_width(text, cls) / 2
        x = min(max(x, half + GAP), self.width - half - GAP)
        for y in baselines:
            if self.free(text_box(x, y, text, cls)):
                break
        self.taken.append(text_box(x, y, text, cls))
        return label(x, y, text, cls)


def text_boxes(fig: dict) -> list[tuple[Box, str, str]]:
    """(box, text, classes) of every text in a figure, as a browser would draw it."""
    found = []

    def walk(marks: list[dict]) -> None:
        for m in marks:
            if m["tag"] == "text" and m["text"]:
                a = m["attrs"]
                found.append((text_box(float(a["x"]), float(a["y"]), m["text"], a.get("class", ""),
                                       a.get("text-anchor", "start")), m["text"], a.get("class", "")))
            walk(m["children"])

    walk(fig["marks"])
    return found
