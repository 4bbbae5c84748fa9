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


MAX_CHANGE = 1.0  # a score (a share of questions) can move by 100 points at most, either way
GROUP_CLASSES = 4  # fig-group-1 … fig-group-4; more groups than that share the last colour


def _axis(largest: float) -> tuple[float, list[float], list[str]]:
    """A symmetric axis around 0 for changes up to ``largest``, never past ±100 points: its extent,
    ticks and their texts (points, signed)."""
    step = tick_step(min(largest, MAX_CHANGE))
    extent = min(step * math.ceil(largest / step - 1e-9), MAX_CHANGE)
    tick_values = [k * step for k in range(-round(extent / step), round(extent / step) + 1)]
    digits = 0 if step * 100 >= 1 - 1e-9 else 1
    texts = [f"{tick * 100:+.{digits}f}".replace("-", "−") if abs(tick) > 1e-12 else "0" for tick in tick_values]
    return extent, tick_values, texts


def _clamped(value: float, extent: float) -> float:
    return max(-extent, min(extent, value))


def subject_delta_chart(rows: list[dict], delta: float, band: float, multiple: float, verdict: str,
                        width: int, band_label: str | None = None,
                        width_setting: tuple[Param, list[tuple[float, float]]] | None = None,
                        groups: dict[str, str] | None = None,
                        pairs: list[tuple[str, float, float]] | None = None) -> dict:
    """Per-subject deltas (candidate minus production), sorted, with the overall delta and its band
    of ± ``band`` (``multiple`` standard errors on the normal curve, or what ``band_label`` says),
    drawn ``width`` wide, on an axis that never goes past ±100 points (a band wider than that is cut
    at the axis, and says so). ``rows``: {"subject", "delta", "n"}, sorted. The delta and the band
    are named in a key above the plot, where no bar can run into their words; where the band
    crosses zero, the zero line is drawn heavier and the key says so. ``width_setting``: the setting of the band's width in
    standard errors, with (its value, the band it gives) pairs: the band's upper edge is then a
    handle that drags and keys it. ``groups`` (subject → group): the bars coloured by group, with
    the groups in the key. ``pairs``: (name, delta, band) of each pair the gate compared (letter
    scoring beside written answers, public beside held-out), drawn under the subjects as rows on
    one axis, so that the shape that rests on them shows in the picture."""
    band_label = band_label or f"gate width {multiple:g}: ± {band * 100:.2f} points"
    extent, tick_values, tick_texts = _axis(max(0.01, max(abs(r["delta"]) for r in rows), abs(delta) + band))
    low, high = _clamped(delta - band, extent), _clamped(delta + band, extent)
    cut = delta + band > extent or delta - band < -extent
    names = sorted(set(groups.values())) if groups else []
    group_class = {g: f"fig-group-{min(i, GROUP_CLASSES - 1) + 1}" for i, g in enumerate(names)}
    zero_inside = low < 0 < high  # no change at all is inside the band: the zero line says so, in the key
    marks, top = legend([("line", "fig-ref fig-delta", f"delta {delta * 100:+.2f} points"),
                         ("box", "fig-band-gate", band_label + (" (cut at the axis)" if cut else "")),
                         *((("line", "fig-zero-in-band", "0 is inside the band"),) if zero_inside else ()),
                         *(("box", group_class[g], g) for g in names)],
                        GAP, GAP, width - 2 * GAP)
    plot_top, plot_bottom = top + 10, top + 220
    y = Linear((-extent, extent), (plot_bottom, plot_top))
    left, right = GAP + max(text_width(t) for t in tick_texts) + 8, width - GAP
    slot = (right - left) / len(rows)
    named = slot >= 48
    plot_bottom_names = plot_bottom + 20 if named else plot_bottom
    marks.append(rect(left, right, y(low), y(high), "fig-band-gate", f"Delta {band_label}"))
    for tick, text in zip(tick_values, tick_texts, strict=True):
        marks.append(hline(left - 5, left, y(tick), "fig-axis"))
        marks.append(label(left - 8, y(tick) + 4, text, "fig-tick", "end"))
    for i, row in enumerate(rows):
        marks += _subject_bar(row, left + i * slot + min(1, slot / 4), slot, y, groups, group_class,
                              plot_bottom + 14 if named else None)
    marks += [
        vline(left, plot_top, plot_bottom, "fig-axis"),
        hline(left, right, y(0), "fig-axis fig-zero-in-band" if zero_inside else "fig-axis"),
        hline(left, right, y(delta), "fig-ref fig-delta"),
    ]
    if width_setting:  # a grip at the middle of the band's upper edge
        marks.append(_band_edge_grip(width_setting, multiple, band, delta, extent, y, y(high), (left + right) / 2))
    words, bottom = caption(left, plot_bottom_names + 8, width - left - GAP,
                            "subjects, sorted by their change (points, candidate minus production)", "start")
    marks += words
    if pairs:
        pair_marks, bottom = _pair_rows(pairs, bottom + GAP, width)
        marks += pair_marks
    return figure(width, round(bottom + GAP), f"Per-subject deltas sorted, with the gate's band; verdict {verdict}",
                  marks, role="group" if width_setting else "img")


def _subject_bar(row: dict, x0: float, slot: float, y: Linear, groups: dict[str, str] | None,
                 group_class: dict[str, str], name_y: float | None) -> list[dict]:
    """One subject's bar from zero to its delta, starting at ``x0`` in its ``slot``, coloured by its
    group (or by its sign), with its name under the plot at ``name_y`` (None: no name)."""
    y0, y1 = y(0), y(row["delta"])
    if abs(y1 - y0) < MIN_BAR:  # a subject that did not move is still a visible bar at zero
        y0, y1 = y(0) - MIN_BAR / 2, y(0) + MIN_BAR / 2
    name = row["subject"].replace("_", " ")
    group = groups.get(row["subject"]) if groups else None
    cls = (f"fig-bar-group {group_class[group]}" if group else "fig-bar-down" if row["delta"] < 0 else "fig-bar-up")
    marks = [rect(x0, x0 + max(slot - 2 * min(1, slot / 4), 0.5), y0, y1, cls,
                  f"{name}{f' ({group})' if group else ''}: {row['delta'] * 100:+.1f} points over "
                  f"{row['n']} questions")]
    if name_y is not None:  # few subjects: each bar's name under the plot, cut to its slot
        marks.append(label(x0 + slot / 2, name_y, _fit(name, slot - 4), "fig-tick"))
    return marks


def _band_edge_grip(width_setting: tuple[Param, list[tuple[float, float]]], multiple: float, band: float,
                    delta: float, extent: float, y: Linear, edge: float, middle: float) -> dict:
    """The handle on the band's upper edge (at ``edge``, centred on ``middle``) that sets its width
    in standard errors, stopping at each (value, band) of ``width_setting``."""
    param, bands = width_setting
    return handle(param, multiple, f"{multiple:g} standard errors: band ± {band * 100:.2f} points",
                  [(y(_clamped(delta + b, extent)), m) for m, b in bands],
                  Box(middle - 14, edge - 6, middle + 14, edge + 6),
                  [rect(middle - 14, middle + 14, edge - 1.5, edge + 1.5, "fig-grip-bar")],
                  at=(middle, edge), hint="drag the edge to widen the gate", axis="y",
                  label=f"{param.label} (the band's upper edge)")


def _pair_rows(pairs: list[tuple[str, float, float]], top: float, width: int) -> tuple[list[dict], float]:
    """Each pair's delta (a line) in its band (a box), one row each under its name, on one axis
    around 0 (never past ±100 points); returns the marks and their bottom."""
    extent, tick_values, tick_texts = _axis(max(0.01, *(abs(d) + b for _, d, b in pairs)))
    left, right = GAP + 8, width - GAP - 8
    x = Linear((-extent, extent), (left, right))
    marks, words = [], []
    row_top = top
    for name, delta, band in pairs:
        low, high = _clamped(delta - band, extent), _clamped(delta + band, extent)
        words.append(label(left, row_top + 12, _fit(f"{name}: {delta * 100:+.2f} ± {band * 100:.2f} points",
                                                     right - left), "fig-tick", "start"))
        middle = row_top + 26
        marks += [rect(x(low), x(high), middle - 7, middle + 7, "fig-band-gate",
                       f"{name}: band {low * 100:+.2f} to {high * 100:+.2f} points"),
                  rect(x(delta) - 1.5, x(delta) + 1.5, middle - 10, middle + 10, "fig-ref",
                       f"{name}: delta {delta * 100:+.2f} points")]
        row_top += 40
    axis = row_top + 2
    marks += [vline(x(0), top + 16, axis, "fig-axis"), hline(left, right, axis, "fig-axis")]
    for tick, text in zip(tick_values, tick_texts, strict=True):
        marks += [vline(x(tick), axis, axis + 5, "fig-axis"), label(x(tick), axis + 18, text, "fig-tick")]
    caption_words, bottom = caption(left, axis + 24, right - left,
                                    "each pair's change with its band (points, candidate minus production)", "start")
    return marks + words + caption_words, bottom
