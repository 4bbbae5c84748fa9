"""MMLU against MMLU-Pro: each model the paper reports on both, as a slope chart (Figure 4, Table 2)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.layout import GAP, baseline_below, line_height, text_width, wrap
from widgetkit.scene import LEADER, Y_AXIS_WIDTH, Linear, direct_labels, figure, label, mark, percent_axis_y
from widgetkit.words import pct

from ..figures import MMLU_VS_PRO


def params(context: dict) -> tuple[Param, ...]:
    return (
        Param("show", "Models shown", "set", tuple(row["model"] for row in MMLU_VS_PRO),
              choices=tuple((row["model"], row["model"]) for row in MMLU_VS_PRO)),
    )


def view(state: dict, context: dict) -> dict:
    # Two columns of points; a focused model's name and scores show over the chart, on two lines
    # where one is too narrow for the longest.
    width = min(state["width"], 560)
    headlines = {row["model"]: wrap(f"{row['model']}: {row['mmlu']:.1f} → {row['pro']:.1f}", width - 2 * GAP,
                                    "fig-point-label") for row in MMLU_VS_PRO}
    step = line_height("fig-point-label")
    top = GAP + step * max(len(lines) for lines in headlines.values()) + 8
    y = Linear((0, 1), (top + 264, top + 8))
    # Each line's model is named beside its MMLU-Pro end: the names take the right-hand column.
    names_width = max(text_width(row["model"], "fig-tick") for row in MMLU_VS_PRO)
    left = Y_AXIS_WIDTH
    right = width - names_width - 4 - LEADER - GAP  # a name starts LEADER past 4 px right of its dot's middle
    marks = percent_axis_y(y, left, right)
    marks += [label(left, y(0) + 22, "MMLU", "fig-tick"), label(right, y(0) + 22, "MMLU-Pro", "fig-tick")]
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
            *(label(GAP, baseline_below(GAP + i * step, "fig-point-label"), line, "fig-point-label", "start")
              for i, line in enumerate(headlines[row["model"]])),
        ]))
    marks.append(direct_labels([(y(row["pro"] / 100), row["model"]) for row in MMLU_VS_PRO
                                if row["model"] in state["show"]], right + 4))
    shown = [drops[m] for m in drops if m in state["show"]]
    if shown:
        summary.append(f"The drops shown run from {min(shown):.1f} to {max(shown):.1f} points "
                       "(Figure 4; GPT-4o's MMLU-Pro score from Table 2).")
    else:
        summary.append("No model is shown; pick at least one.")
    summary.append("Every MMLU-Pro score here is checked against the authors' dataset card, leaderboard or cached "
                   "predictions, except that Gemma-7B's cached predictions give 33.8, one tenth above the 33.7 shown; "
                   "the MMLU scores of GPT-4o, Claude-3-Opus and Llama-3-70B-Instruct are checked against the dataset "
                   "card, and the other three MMLU scores are unchecked.")
    return {
        "summary": summary,
        "figure": figure(width, round(y(0) + 32), "Each model's MMLU score joined to its MMLU-Pro score", marks, role="group"),
        "numbers": {"drops": drops, "chance": {"mmlu": pct(0.25, 0), "pro": pct(0.1, 0)}},
    }


WIDGET = Widget(
    name="mmlu-vs-pro",
    title="MMLU against MMLU-Pro",
    blurb="The same models on both benchmarks: every one loses 16 to 33 points on MMLU-Pro (Figure 4).",
    height=560, params=params, view=view, style=True,
)
