"""Figures laid out for the width they are drawn at.

A widget's view is asked for a width in CSS pixels (the ``width`` the page measured, or a default
before it could), and its figure is drawn in a viewBox of that width and shown at 1:1, so a
12-unit font is 12 px on a phone and on a desktop alike. What changes with the width is the
layout: how many ticks fit, whether a bar's name goes beside it or above it, where a label moves
to keep clear of another. For that, text is measured here, in Python, with DejaVu Sans's own
advance widths (``metrics``), which the server and the reader's Pyodide compute identically.
"""
from __future__ import annotations

from dataclasses import dataclass

from .metrics import ASCENT, BOLD, DESCENT, REGULAR

DEFAULT_WIDTH = 640  # what the server draws before the page has measured its width
NARROW_WIDTH = 320  # the picture a phone shows until its own width is known
MIN_WIDTH, MAX_WIDTH = 240, 1600  # a width asked for outside these is drawn at the nearest one

# Type of each kind of figure text: (size in px, bold). Every size is 12 px or more.
TYPE = {
    "fig-tick": (12, False),
    "fig-caption": (12, False),
    "fig-group-label": (12, False),
    "fig-ref-label": (12, True),
    "fig-label": (13, False),
    "fig-point-label": (13, True),
}
GAP = 6  # the least space between two texts, or between a text and the figure's edge


def drawn_width(value: object) -> tuple[int, list[str]]:
    """The width to lay a figure out for, from what the page sent (a whole number of pixels);
    with a message when it was not a number at all. A number out of range is drawn at the nearest
    width in range, silently: a frame narrower than MIN_WIDTH simply scales the picture down."""
    if value is None or value == "":
        return DEFAULT_WIDTH, []
    try:
        number = int(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None:
        return DEFAULT_WIDTH, [f"width: {str(value)[:20]!r} is not a whole number of pixels; drawn at {DEFAULT_WIDTH}."]
    return min(MAX_WIDTH, max(MIN_WIDTH, number)), []


def type_of(cls: str) -> tuple[int, bool]:
    """(size, bold) of a text with these classes: the first class TYPE names, else a tick's."""
    for name in cls.split():
        if name in TYPE:
            return TYPE[name]
    return TYPE["fig-tick"]


def text_width(text: str, cls: str = "fig-tick") -> float:
    """How wide ``text`` is drawn in this class's type; characters the table lacks count an em."""
    size, bold = type_of(cls)
    widths = BOLD if bold else REGULAR
    return size * sum(widths.get(character, 1000) for character in text) / 1000


def line_height(cls: str = "fig-tick") -> float:
    """The height of one line of text: its ascent and descent (what a browser's text box covers)."""
    return type_of(cls)[0] * (ASCENT + DESCENT)


def wrap(text: str, width: float, cls: str = "fig-tick") -> list[str]:
    """``text`` broken at spaces into lines no wider than ``width`` (a longer word keeps a line of its own)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", cls) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]


@dataclass(frozen=True)
class Box:
    """A rectangle in figure units: x0 ≤ x1 left to right, y0 ≤ y1 top to bottom."""

    x0: float
    y0: float
    x1: float
    y1: float

    def meets(self, other: Box, gap: float = 0) -> bool:
        """True if the two boxes come closer than ``gap`` in both directions."""
        return (self.x0 < other.x1 + gap and other.x0 < self.x1 + gap
                and self.y0 < other.y1 + gap and other.y0 < self.y1 + gap)

    def inside(self, width: float, height: float) -> bool:
        return self.x0 >= 0 and self.y0 >= 0 and self.x1 <= width and self.y1 <= height


def text_box(x: float, y: float, text: str, cls: str = "fig-tick", anchor: str = "middle") -> Box:
    """The box a browser draws ``text`` in: ``y`` is its baseline, ``anchor`` SVG's text-anchor."""
    size, _ = type_of(cls)
    width = text_width(text, cls)
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return Box(left, y - ASCENT * size, left + width, y + DESCENT * size)


def baseline_below(top: float, cls: str = "fig-tick") -> float:
    """The baseline of a line whose box starts at ``top``."""
    return top + ASCENT * type_of(cls)[0]


def ticks(low: float, high: float, pixels: float, label_width: float, steps: tuple[float, ...]) -> list[float]:
    """Tick values from ``low`` to ``high`` at the finest of ``steps`` whose labels, each
    ``label_width`` wide, keep GAP apart over ``pixels``; the coarsest step if none does."""
    for step in steps:
        count = round((high - low) / step)
        if count == 0 or abs(count * step - (high - low)) > 1e-9 * max(1, abs(high - low)):
            continue  # the step does not divide the range
        if pixels / count >= label_width + GAP or step == steps[-1]:
            return [low + i * step for i in range(count + 1)]
    return [low, high]
