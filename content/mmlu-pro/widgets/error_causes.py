"""Error analysis: why GPT-4o got 120 sampled MMLU-Pro questions wrong (§5.3)."""
from __future__ import annotations

from widgetkit import Param, Widget
from widgetkit.layout import GAP, text_width
from widgetkit.scene import Linear, Rows, figure, label, legend, mark, percent_axis_part, rect

from ..figures import ERROR_CAUSES, ERRORS_SAMPLED

# The paper separates calculation from reasoning because a calculator or Python can fix the first (§5.3).
TOOL_FIXABLE = {"Calculation errors"}


def params(context: dict) -> tuple[Param, ...]:
    return (Param("order", "Order", "choice", "paper", choices=(("paper", "largest first"), ("name", "by name"))),)


def view(state: dict, context: dict) -> dict:
    rows = sorted(ERROR_CAUSES) if state["order"] == "name" else list(ERROR_CAUSES)
    width = state["width"]
    names = Rows.fit([cause for cause, _ in rows], width)
    pitch = names.name_height + 30
    x = Linear((0, 0.5), (names.x0, names.x1))
    marks, summary = [], []
    for number, (cause, share) in enumerate(rows):
        top = 12 + number * pitch
        bar = top + names.name_height
        about = round(ERRORS_SAMPLED * share / 100)
        text = f"{cause}: {share}% of the {ERRORS_SAMPLED} errors (about {about})"
        summary.append(text + ("; a calculator or Python could fix these." if cause in TOOL_FIXABLE else "."))
        cls = "fig-bar-model-b" if cause in TOOL_FIXABLE else "fig-bar-model-a"
        shown = f"{share}%"
        marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text}, children=[
            rect(x(0), x(share / 100), bar, bar + 20, cls),
            names.name(top, 20, cause),
            label(min(x(share / 100) + 6, width - GAP - text_width(shown, "fig-point-label")), bar + 15, shown,
                  "fig-point-label", "start"),
        ]))
    summary.append("These shares are §5.3's, unchecked: only a secondary review of the paper gives them.")
    bottom = 12 + len(rows) * pitch
    marks += percent_axis_part(x, bottom + 4, 0, 50, 10)
    keys, end = legend([("box", "fig-bar-model-a", "other causes"),
                        ("box", "fig-bar-model-b", "a calculator could fix these")],
                       names.x0, bottom + 30, names.x1 - names.x0)
    marks += keys
    return {
        "summary": summary,
        "figure": figure(width, round(end + GAP), f"Causes of GPT-4o's errors in {ERRORS_SAMPLED} sampled questions", marks,
                         role="group"),
        "numbers": {"causes": dict(ERROR_CAUSES)},
    }


WIDGET = Widget(
    name="error-causes",
    title="Error analysis: why GPT-4o was wrong",
    blurb="The paper's breakdown of 120 of GPT-4o's wrong answers by cause (§5.3).",
    height=480, params=params, view=view,
)
