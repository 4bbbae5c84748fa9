"""MMLU against MMLU-Pro: each model the paper reports on both, as a slope chart (Figure 4, Table 2)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.scene import Linear, figure, label, mark, percent_axis_y
from widgetkit.words import pct

from ..figures import MMLU_VS_PRO


def params(context: dict) -> tuple[Param, ...]:
    return (
        Param("show", "Models shown", "set", tuple(row["model"] for row in MMLU_VS_PRO),
              choices=tuple((row["model"], row["model"]) for row in MMLU_VS_PRO)),
    )


def view(state: dict, context: dict) -> dict:
    y = Linear((0, 1), (300, 20))
    left, right = 230, 420  # room on the left for a focused model's name at phone size
    marks = percent_axis_y(y, left, right)
    marks += [label(left, 322, "MMLU", "fig-tick"), label(right, 322, "MMLU-Pro", "fig-tick")]
    summary, drops = [], {}
    for row in MMLU_VS_PRO:
        drop = row["mmlu"] - row["pro"]
        drops[row["model"]] = round(drop, 1)
        if row["model"] not in state["show"]:
            continue
        text = f"{row['model']}: {row['mmlu']:.1f}% on MMLU, {row['pro']:.1f}% on MMLU-Pro, {drop:.1f} points lower"
        summary.append(text + ".")
        y0, y1 = y(row["mmlu"] / 100), y(row["pro"] / 100)
        marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text}, children=[
            mark("line", {"x1": left, "y1": y0, "x2": right, "y2": y1, "class": "fig-line slope-line"}),
            mark("circle", {"cx": left, "cy": y0, "r": 5, "class": "slope-end"}),
            mark("circle", {"cx": right, "cy": y1, "r": 5, "class": "slope-end"}),
            mark("text", {"x": left - 8, "y": y0 + 4, "class": "fig-point-label", "text-anchor": "end"},
                 f"{row['model']} {row['mmlu']:.1f}"),
            mark("text", {"x": right + 8, "y": y1 + 4, "class": "fig-point-label", "text-anchor": "start"},
                 f"{row['pro']:.1f}"),
        ]))
    shown = [drops[m] for m in drops if m in state["show"]]
    if shown:
        summary.append(f"The drops shown run from {min(shown):.1f} to {max(shown):.1f} points "
                       "(Figure 4; GPT-4o's MMLU-Pro score from Table 2).")
    else:
        summary.append("No model is shown; pick at least one.")
    summary.append("Every MMLU-Pro score here is checked against the authors' dataset card, leaderboard or cached "
                   "predictions, and the MMLU scores of GPT-4o, Claude-3-Opus and Llama-3-70B-Instruct against the "
                   "dataset card; the other three MMLU scores are a review's figures, not checked against the paper.")
    return {
        "summary": summary,
        "figure": figure(560, 336, "Each model's MMLU score joined to its MMLU-Pro score", marks, role="group"),
        "numbers": {"drops": drops, "chance": {"mmlu": pct(0.25, 0), "pro": pct(0.1, 0)}},
    }


WIDGET = Widget(
    name="mmlu-vs-pro",
    title="MMLU against MMLU-Pro",
    blurb="The same models on both benchmarks: every one loses 16 to 33 points on MMLU-Pro (Figure 4).",
    height=560, params=params, view=view, style=True,
)
