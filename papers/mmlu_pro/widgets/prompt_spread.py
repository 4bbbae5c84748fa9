"""Prompt robustness: the range of one model's scores over 24 prompt styles, on each benchmark (Figure 5, §6.3)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.scene import Linear, figure, hwhisker, label, mark

from ..figures import PROMPT_SPREAD, PROMPT_STYLES, WIDEST_SPREAD
from .axes import percent_axis_part


def params(context: dict) -> tuple[Param, ...]:
    return (Param("scale", "Axis", "choice", "zoom", choices=(("zoom", "20% to 70%"), ("full", "0% to 100%"))),)


def view(state: dict, context: dict) -> dict:
    low_end, high_end = (20, 70) if state["scale"] == "zoom" else (0, 100)
    x = Linear((low_end / 100, high_end / 100), (200, 540))
    marks, summary, spreads = [], [], {}
    row_number = 0
    for row in PROMPT_SPREAD:
        for key, name in (("mmlu", "MMLU"), ("pro", "MMLU-Pro")):
            low, high = row[key]
            spread = round(high - low, 1)
            spreads[f"{row['model']} {name}"] = spread
            top = 30 + row_number * 36
            text = (f"{row['model']} on {name}: {low:.1f}% to {high:.1f}% over {PROMPT_STYLES} prompts, "
                    f"a spread of {spread:.1f} points")
            summary.append(text + ".")
            marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text}, children=[
                hwhisker(x(low / 100), x(high / 100), top, "fig-whisker"),
                mark("text", {"x": 192, "y": top + 4, "class": "fig-tick", "text-anchor": "end"},
                     f"{row['model']}, {name}"),
                mark("text", {"x": x(high / 100) + 8, "y": top + 4, "class": "fig-point-label", "text-anchor": "start"},
                     f"{spread:.1f}"),
            ]))
            row_number += 1
    bottom = 30 + row_number * 36
    marks += percent_axis_part(x, bottom - 10, low_end, high_end, 10)
    summary.append(f"The widest spread §6.3 reports is {WIDEST_SPREAD['mmlu']:.2f} points on MMLU and "
                   f"{WIDEST_SPREAD['pro']:.2f} on MMLU-Pro; the ranges above are read off Figure 5. All of these "
                   f"reached us through a review of the paper and could not be checked against it.")
    marks.append(label(370, bottom + 22, "score over the prompt styles, lowest to highest", "fig-caption"))
    return {
        "summary": summary,
        "figure": figure(560, bottom + 32, "Lowest to highest score over prompt styles, per model and benchmark", marks,
                         role="group"),
        "numbers": {"spreads": spreads},
    }


WIDGET = Widget(
    name="prompt-spread",
    title="Prompt robustness: the spread over 24 prompt styles",
    blurb="How far a change of prompt moves one model's score on MMLU and on MMLU-Pro (Figure 5).",
    height=420, params=params, view=view,
)
