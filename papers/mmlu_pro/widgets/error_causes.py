"""Error analysis: why GPT-4o got 120 sampled MMLU-Pro questions wrong (§5.3)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.scene import Linear, figure, mark, rect

from ..figures import ERROR_CAUSES, ERRORS_SAMPLED
from .axes import percent_axis_part

# The paper separates calculation from reasoning because a calculator or Python can fix the first (§5.3).
TOOL_FIXABLE = {"Calculation errors"}


def params(context: dict) -> tuple[Param, ...]:
    return (Param("order", "Order", "choice", "paper", choices=(("paper", "largest first"), ("name", "by name"))),)


def view(state: dict, context: dict) -> dict:
    rows = sorted(ERROR_CAUSES) if state["order"] == "name" else list(ERROR_CAUSES)
    x = Linear((0, 0.5), (230, 540))
    marks, summary = [], []
    for number, (cause, share) in enumerate(rows):
        top = 16 + number * 30
        about = round(ERRORS_SAMPLED * share / 100)
        text = f"{cause}: {share}% of the {ERRORS_SAMPLED} errors (about {about})"
        summary.append(text + ("; a calculator or Python could fix these." if cause in TOOL_FIXABLE else "."))
        cls = "fig-bar-model-b" if cause in TOOL_FIXABLE else "fig-bar-model-a"
        marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text}, children=[
            rect(x(0), x(share / 100), top, top + 20, cls),
            mark("text", {"x": 222, "y": top + 15, "class": "fig-tick", "text-anchor": "end"}, cause),
            mark("text", {"x": x(share / 100) + 6, "y": top + 15, "class": "fig-point-label", "text-anchor": "start"},
                 f"{share}%"),
        ]))
    summary.append("These shares are §5.3's as a review of the paper reports them; they are not in the authors' "
                   "dataset card or repository, so they could not be checked against the paper.")
    bottom = 16 + len(rows) * 30
    marks += percent_axis_part(x, bottom + 4, 0, 50, 10)
    return {
        "summary": summary,
        "figure": figure(560, bottom + 30, f"Causes of GPT-4o's errors in {ERRORS_SAMPLED} sampled questions", marks,
                         role="group"),
        "numbers": {"causes": dict(ERROR_CAUSES)},
    }


WIDGET = Widget(
    name="error-causes",
    title="Error analysis: why GPT-4o was wrong",
    blurb="The paper's breakdown of 120 of GPT-4o's wrong answers by cause (§5.3).",
    height=480, params=params, view=view,
)
