"""Tiny SVG scene builder for the interactive widgets.

A figure is plain data: {"width", "height", "label", "marks"}, each mark
{"tag", "attrs", "text", "children"}. The server turns it into inline SVG with one Jinja macro and
the browser patches the same data into the live SVG, so the drawing exists once, in Python, and
runs unchanged in CPython and in Pyodide. Coordinates are rounded strings so both sides emit the
same characters.
"""
from __future__ import annotations

import math


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
    return mark("text", {"x": x, "y": y, "class": cls, "text-anchor": anchor}, text)


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


def percent_axis_x(scale: Linear, y: float, step: int = 10) -> list[dict]:
    """A horizontal 0–100 % axis with ticks and labels under it."""
    marks = [hline(scale(0), scale(1), y, "fig-axis")]
    for tick in range(0, 101, step):
        x = scale(tick / 100)
        marks.append(vline(x, y, y + 5, "fig-axis"))
        marks.append(label(x, y + 18, f"{tick}%", "fig-tick"))
    return marks


def percent_axis_y(scale: Linear, x0: float, x1: float, step: int = 25, gridlines: bool = True) -> list[dict]:
    """A vertical 0–100 % axis on the left with light grid lines across the plot."""
    marks = [vline(x0, scale(0), scale(1), "fig-axis")]
    for tick in range(0, 101, step):
        y = scale(tick / 100)
        if gridlines and tick:
            marks.append(hline(x0, x1, y, "fig-grid"))
        marks.append(hline(x0 - 5, x0, y, "fig-axis"))
        marks.append(label(x0 - 8, y + 5, f"{tick}%", "fig-tick", "end"))
    return marks
