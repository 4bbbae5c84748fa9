"""Charts more than one paper draws, built from the scene builder (scene.py)."""
from __future__ import annotations

import math

from .layout import GAP, Box, text_width
from .scene import Linear, caption, figure, handle, hline, label, legend, rect, vline
from .settings import Param

MIN_BAR = 2  # pixels: the height of a bar for a subject at (or near) +0.0


def tick_step(largest: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) that puts two to four ticks each side of zero."""
    power = 10 ** math.floor(math.log10(largest / 4))
    for factor in (1, 2, 5, 10):
        if largest / (factor * power) <= 4:
            return factor * power
    return 10 * power


def _fit(text: str, width: float) -> str:
    """``text`` cut (with an ellipsis) to fit ``width`` pixels."""
    if text_width(text) <= width:
        return text
    while text and text_width(text + "…") > width:
        text = text[:-1]
    return text + "…" if text else ""


def subject_delta_chart(rows: list[dict], delta: float, band: float, multiple: float, verdict: str,
                        width: int, band_label: str | None = None,
                        width_setting: tuple[Param, list[tuple[float, float]]] | None = None) -> dict:
    """Per-subject deltas (candidate minus production), sorted, with the overall delta and its band
    of ± ``band`` (``multiple`` clustered standard errors, or what ``band_label`` says), drawn
    ``width`` wide. ``rows``: {"subject", "delta", "n"}, sorted. The delta and the band are named
    in a key above the plot, where no bar can run into their words. ``width_setting``: the
    setting of the band's width in standard errors, with (its value, the band it gives) pairs:
    the band's upper edge is then a handle that drags and keys it."""
    band_label = band_label or f"± {multiple:g} clustered standard errors"
    largest = max(0.01, max(abs(r["delta"]) for r in rows), abs(delta) + band)
    step = tick_step(largest)
    extent = step * math.ceil(largest / step - 1e-9)
    tick_values = [k * step for k in range(-round(extent / step), round(extent / step) + 1)]
    digits = 0 if step * 100 >= 1 - 1e-9 else 1
    tick_texts = [f"{tick * 100:+.{digits}f}".replace("-", "−") if abs(tick) > 1e-12 else "0" for tick in tick_values]
    marks, top = legend([("line", "fig-ref fig-delta", f"delta {delta * 100:+.2f} points"),
                         ("box", "fig-band-gate", band_label)],
                        GAP, GAP, width - 2 * GAP)
    plot_top, plot_bottom = top + 10, top + 220
    y = Linear((-extent, extent), (plot_bottom, plot_top))
    left, right = GAP + max(text_width(t) for t in tick_texts) + 8, width - GAP
    slot = (right - left) / len(rows)
    named = slot >= 48
    if named:
        plot_bottom_names = plot_bottom + 20
    else:
        plot_bottom_names = plot_bottom
    marks.append(rect(left, right, y(delta - band), y(delta + band), "fig-band-gate",
                      f"Delta {band_label}"))
    for tick, text in zip(tick_values, tick_texts, strict=True):
        marks.append(hline(left - 5, left, y(tick), "fig-axis"))
        marks.append(label(left - 8, y(tick) + 4, text, "fig-tick", "end"))
    for i, row in enumerate(rows):
        x0 = left + i * slot + min(1, slot / 4)
        y0, y1 = y(0), y(row["delta"])
        if abs(y1 - y0) < MIN_BAR:  # a subject that did not move is still a visible bar at zero
            y0, y1 = y(0) - MIN_BAR / 2, y(0) + MIN_BAR / 2
        name = row["subject"].replace("_", " ")
        marks.append(rect(x0, x0 + max(slot - 2 * min(1, slot / 4), 0.5), y0, y1,
                          "fig-bar-down" if row["delta"] < 0 else "fig-bar-up",
                          f"{name}: {row['delta'] * 100:+.1f} points over {row['n']} questions"))
        if named:  # few subjects: each bar's name under the plot, cut to its slot
            marks.append(label(x0 + slot / 2, plot_bottom + 14, _fit(name, slot - 4), "fig-tick"))
    marks += [
        vline(left, plot_top, plot_bottom, "fig-axis"),
        hline(left, right, y(0), "fig-axis"),
        hline(left, right, y(delta), "fig-ref fig-delta"),
    ]
    if width_setting:  # a grip at the middle of the band's upper edge
        param, bands = width_setting
        edge, middle = y(delta + band), (left + right) / 2
        marks.append(handle(param, multiple, f"{multiple:g} standard errors: band ± {band * 100:.2f} points",
                            [(y(delta + b), m) for m, b in bands], Box(middle - 14, edge - 6, middle + 14, edge + 6),
                            [rect(middle - 14, middle + 14, edge - 1.5, edge + 1.5, "fig-grip-bar")],
                            at=(middle, edge), hint="drag the edge to widen the gate", axis="y",
                            label=f"{param.label} (the band's upper edge)"))
    words, bottom = caption(left, plot_bottom_names + 8, width - left - GAP,
                            "subjects, sorted by their change (points, candidate minus production)", "start")
    return figure(width, round(bottom + GAP), f"Per-subject deltas sorted, with the gate's band; verdict {verdict}",
                  marks + words, role="group" if width_setting else "img")
