"""Chain of thought against direct answers: per model, on MMLU and on MMLU-Pro (Table 3)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.layout import GAP, text_width
from widgetkit.scene import Linear, Rows, figure, label, legend, mark, percent_axis_x, rect

from ..figures import COT_VS_DIRECT

BENCHMARKS = (("mmlu", "MMLU"), ("pro", "MMLU-Pro"))


def params(context: dict) -> tuple[Param, ...]:
    return (Param("benchmark", "Benchmark", "choice", "pro", choices=BENCHMARKS),)


def view(state: dict, context: dict) -> dict:
    key = state["benchmark"]
    name = dict(BENCHMARKS)[key]
    width = state["width"]
    rows = Rows.fit([row["model"] for row in COT_VS_DIRECT], width)
    pitch = rows.name_height + 40
    x = Linear((0, 1), (rows.x0, rows.x1))
    marks, summary, gains = [], [], {}
    for row_number, row in enumerate(COT_VS_DIRECT):
        top = 12 + row_number * pitch
        bars = top + rows.name_height
        da, cot = row[key]["da"], row[key]["cot"]
        gain = round(cot - da, 1)
        gains[row["model"]] = gain
        verdict = "reasoning pays" if gain > 0 else "reasoning costs"
        text = f"{row['model']} on {name}: direct {da:.1f}%, chain of thought {cot:.1f}% ({gain:+.1f} points, {verdict})"
        summary.append(text + ".")
        shown = f"{gain:+.1f}"
        marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text}, children=[
            rect(x(0), x(da / 100), bars, bars + 14, "fig-bar-model-b", f"direct {da:.1f}%"),
            rect(x(0), x(cot / 100), bars + 16, bars + 30, "fig-bar-model-a", f"chain of thought {cot:.1f}%"),
            rows.name(top, 30, row["model"]),
            label(min(x(max(da, cot) / 100) + 6, width - GAP - text_width(shown, "fig-point-label")), bars + 19, shown,
                  "fig-point-label", "start"),
        ]))
    bottom = 12 + len(COT_VS_DIRECT) * pitch
    marks += percent_axis_x(x, bottom, step=25)
    keys, end = legend([("box", "fig-bar-model-b", "direct"), ("box", "fig-bar-model-a", "chain of thought")],
                       rows.x0, bottom + 26, rows.x1 - rows.x0)
    marks += keys
    helped = sum(gain > 0 for gain in gains.values())
    summary.append(f"On {name}, chain of thought helps {helped} of {len(gains)} models (Table 3).")
    summary.append("GPT-4o's MMLU-Pro pair and its MMLU chain-of-thought score are checked against the authors' "
                   "dataset card, and the MMLU-Pro chain-of-thought scores against their leaderboard and cached "
                   "predictions; the other scores are unchecked.")
    return {
        "summary": summary,
        "figure": figure(width, round(end + GAP), f"Direct answers against chain of thought on {name}, per model", marks,
                         role="group"),
        "numbers": {"gains": gains},
    }


WIDGET = Widget(
    name="cot-vs-direct",
    title="Chain of thought against direct answers",
    blurb="Thinking step by step costs points on MMLU for some models and wins up to 19 points on MMLU-Pro (Table 3).",
    height=520, params=params, view=view,
)
