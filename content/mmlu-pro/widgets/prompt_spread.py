"""Prompt robustness: the range of one model's scores over 24 prompt styles, on each benchmark (Figure 5, §6.3)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.layout import GAP, text_width
from widgetkit.scene import Linear, Rows, caption, figure, hwhisker, label, mark, percent_axis_part

from ..figures import PROMPT_SPREAD, PROMPT_STYLES, WIDEST_SPREAD


def params(context: dict) -> tuple[Param, ...]:
    return (Param("scale", "Axis", "choice", "zoom", choices=(("zoom", "20% to 70%"), ("full", "0% to 100%"))),)


def view(state: dict, context: dict) -> dict:
    low_end, high_end = (20, 70) if state["scale"] == "zoom" else (0, 100)
    width = state["width"]
    rows = Rows.fit([f"{row['model']}, MMLU-Pro" for row in PROMPT_SPREAD], width)
    pitch = rows.name_height + 30
    x = Linear((low_end / 100, high_end / 100), (rows.x0, rows.x1))
    marks, summary, spreads = [], [], {}
    row_number = 0
    for row in PROMPT_SPREAD:
        for key, name in (("mmlu", "MMLU"), ("pro", "MMLU-Pro")):
            low, high = row[key]
            spread = round(high - low, 1)
            spreads[f"{row['model']} {name}"] = spread
            top = 12 + row_number * pitch
            middle = top + rows.name_height + 8
            text = (f"{row['model']} on {name}: {low:.1f}% to {high:.1f}% over {PROMPT_STYLES} prompts, "
                    f"a spread of {spread:.1f} points")
            summary.append(text + ".")
            shown = f"{spread:.1f}"
            marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text}, children=[
                hwhisker(x(low / 100), x(high / 100), middle, "fig-whisker"),
                rows.name(top, 16, f"{row['model']}, {name}"),
                label(min(x(high / 100) + 8, width - GAP - text_width(shown, "fig-point-label")), middle + 4, shown,
                      "fig-point-label", "start"),
            ]))
            row_number += 1
    bottom = 12 + row_number * pitch
    marks += percent_axis_part(x, bottom, low_end, high_end, 10)
    summary.append(f"The widest spread §6.3 reports is {WIDEST_SPREAD['mmlu']:.2f} points on MMLU and "
                   f"{WIDEST_SPREAD['pro']:.2f} on MMLU-Pro; the ranges above are read off Figure 5. All of these "
                   f"are unchecked: only a secondary review of the paper gives them.")
    words, end = caption((rows.x0 + rows.x1) / 2, bottom + 26, rows.x1 - rows.x0,
                         "score over the prompt styles, lowest to highest")
    marks += words
    return {
        "summary": summary,
        "figure": figure(width, round(end + GAP), "Lowest to highest score over prompt styles, per model and benchmark", marks,
                         role="group"),
        "numbers": {"spreads": spreads},
    }


WIDGET = Widget(
    name="prompt-spread",
    title="Prompt robustness: the spread over 24 prompt styles",
    blurb="How far a change of prompt moves one model's score on MMLU and on MMLU-Pro (Figure 5).",
    height=420, params=params, view=view,
)
