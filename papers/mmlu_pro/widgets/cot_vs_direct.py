"""Chain of thought against direct answers: per model, on MMLU and on MMLU-Pro (Table 3)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.scene import Linear, figure, label, mark, percent_axis_x, rect

from ..figures import COT_VS_DIRECT

BENCHMARKS = (("mmlu", "MMLU"), ("pro", "MMLU-Pro"))


def params(context: dict) -> tuple[Param, ...]:
    return (Param("benchmark", "Benchmark", "choice", "pro", choices=BENCHMARKS),)


def view(state: dict, context: dict) -> dict:
    key = state["benchmark"]
    name = dict(BENCHMARKS)[key]
    x = Linear((0, 1), (200, 540))
    marks, summary, gains = [], [], {}
    for row_number, row in enumerate(COT_VS_DIRECT):
        top = 24 + row_number * 44
        da, cot = row[key]["da"], row[key]["cot"]
        gain = round(cot - da, 1)
        gains[row["model"]] = gain
        verdict = "reasoning pays" if gain > 0 else "reasoning costs"
        text = f"{row['model']} on {name}: direct {da:.1f}%, chain of thought {cot:.1f}% ({gain:+.1f} points, {verdict})"
        summary.append(text + ".")
        marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text}, children=[
            rect(x(0), x(da / 100), top, top + 14, "fig-bar-model-b", f"direct {da:.1f}%"),
            rect(x(0), x(cot / 100), top + 16, top + 30, "fig-bar-model-a", f"chain of thought {cot:.1f}%"),
            mark("text", {"x": 192, "y": top + 19, "class": "fig-tick", "text-anchor": "end"}, row["model"]),
            mark("text", {"x": x(max(da, cot) / 100) + 6, "y": top + 19, "class": "fig-point-label",
                          "text-anchor": "start"}, f"{gain:+.1f}"),
        ]))
    bottom = 24 + len(COT_VS_DIRECT) * 44
    marks += percent_axis_x(x, bottom, step=25)
    marks += [rect(200, 214, bottom + 26, bottom + 36, "fig-bar-model-b"), label(220, bottom + 35, "direct", "fig-tick", "start"),
              rect(300, 314, bottom + 26, bottom + 36, "fig-bar-model-a"),
              label(320, bottom + 35, "chain of thought", "fig-tick", "start")]
    helped = sum(gain > 0 for gain in gains.values())
    summary.append(f"On {name}, chain of thought helps {helped} of {len(gains)} models (Table 3).")
    summary.append("GPT-4o's MMLU-Pro pair and its MMLU chain-of-thought score are checked against the authors' "
                   "dataset card, and the MMLU-Pro chain-of-thought scores against their leaderboard and cached "
                   "predictions; the other scores are a review's figures, not checked against the paper.")
    return {
        "summary": summary,
        "figure": figure(560, bottom + 46, f"Direct answers against chain of thought on {name}, per model", marks,
                         role="group"),
        "numbers": {"gains": gains},
    }


WIDGET = Widget(
    name="cot-vs-direct",
    title="Chain of thought against direct answers",
    blurb="Thinking step by step costs points on MMLU for some models and wins up to 19 points on MMLU-Pro (Table 3).",
    height=520, params=params, view=view,
)
