"""Accuracy against model size: GPT-3 at chance until 175B, UnifiedQA above it (Table 1, Appendix A)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.layout import GAP, text_width
from widgetkit.scene import Y_AXIS_WIDTH, Linear, Log10, caption, figure, hline, label, legend, mark, percent_axis_y, vline
from widgetkit.words import pct

from ..figures import paper_figures, reference

_SERIES = (
    ("fewshot", "GPT-3 few-shot", "GPT-3", "few-shot"),
    ("zeroshot", "GPT-3 zero-shot", "GPT-3", "zero-shot"),
    ("unifiedqa", "UnifiedQA (transfer)", "UnifiedQA", "transfer"),
)


def params(context: dict) -> tuple[Param, ...]:
    return (
        Param("show", "Series shown", "set", tuple(key for key, *_ in _SERIES),
              choices=tuple((key, name) for key, name, *_ in _SERIES)),
    )


def _size(parameters: float) -> str:
    if parameters >= 1e9:
        return f"{parameters / 1e9:g}B"
    return f"{parameters / 1e6:g}M"


def view(state: dict, context: dict) -> dict:
    data = paper_figures()["scaling"]["series"]
    chance, expert = reference("chance"), reference("expert")
    width = state["width"]
    left, right = Y_AXIS_WIDTH, width - 2 * GAP
    x = Log10((1e7, 1e12), (left, right))
    y = Linear((0, 1), (270, 20))
    marks = percent_axis_y(y, left, right)
    marks.append(hline(left, right, 270, "fig-axis"))
    # A label at every power of ten where they have room, at every other one where not.
    every = 1 if (x(1e8) - x(1e7)) >= text_width("100M") + GAP else 2
    for power in range(7, 13):
        marks.append(vline(x(10 ** power), 270, 275, "fig-axis"))
        if (power - 7) % every == 0:
            marks.append(label(x(10 ** power), 290, _size(10 ** power) if power < 12 else "1T", "fig-tick"))
    words, bottom = caption((left + right) / 2, 298, right - left, "parameters (log scale: each step is ten times more)")
    marks += words + [
        hline(left, right, y(chance), "fig-ref fig-chance"),
        label(right - 2, y(chance) + 16, f"chance {pct(chance, 0)}", "fig-ref-label", "end"),  # under its line: no point is there
        hline(left, right, y(expert), "fig-ref fig-expert"),
        label(right - 2, y(expert) - 6, f"expert {pct(expert)}", "fig-ref-label", "end"),
    ]
    summary = []
    for key, name, model, setting in _SERIES:
        series = next(s for s in data if s["model"] == model and s["setting"] == setting)
        pts = series["points"]
        described = ", ".join(
            f"{_size(p['parameters'])} {p['accuracy']:.1f}%{' (about)' if p.get('approximate') else ''}" for p in pts)
        if key not in state["show"]:
            summary.append(f"{name}: hidden.")
            continue
        summary.append(f"{name}: {described}.")
        coords = [(x(p["parameters"]), y(p["accuracy"] / 100)) for p in pts]
        if len(coords) > 1:
            marks.append(mark("polyline", {"points": " ".join(f"{a:.1f},{b:.1f}" for a, b in coords),
                                           "class": f"fig-line series-{key}"}))
        for p, (cx, cy) in zip(pts, coords, strict=False):
            text = f"{name}, {_size(p['parameters'])} parameters: {p['accuracy']:.1f}%"
            point = {"class": f"fig-point series-{key}", "tabindex": "0", "role": "img", "aria-label": text}
            shown = f"{_size(p['parameters'])}: {p['accuracy']:.1f}%"
            half = text_width(shown, "fig-point-label") / 2
            marks.append(mark("g", point, children=[
                mark("circle", {"cx": cx, "cy": cy, "r": 6}),
                label(min(max(cx, half + GAP), width - half - GAP), cy - 12 if cy > 40 else cy + 24, shown,
                      "fig-point-label"),
            ]))
    keys, bottom = legend([("dot", f"fig-legend series-{key}", name) for key, name, *_ in _SERIES if key in state["show"]],
                          left, bottom + 8, right - left)
    marks += keys
    summary.append(f"Chance is {pct(chance, 0)} and the estimated expert level {pct(expert)} (Section 3); "
                   "accuracies from Table 1 and Appendix A.")
    return {
        "summary": summary,
        "figure": figure(width, round(bottom + GAP), "Accuracy against number of parameters, log scale", marks, role="group"),
        "numbers": {"shown": state["show"]},
    }




WIDGET = Widget(
    name="scaling-plot",
    title="Accuracy against model size",
    blurb="Few-shot GPT-3 sits at chance until 175 billion parameters; UnifiedQA starts above it (Table 1, Appendix A).",
    height=640, params=params, view=view, style=True,
)
