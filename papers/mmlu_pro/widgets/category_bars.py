"""Category bars: how precisely a score is known in each MMLU-Pro category, from its real size.

A model that scores a share p overall is drawn with its 95 % band in every category (normal or
Wilson, explainers.stats.confidence_interval on that category's number of test questions). GPT-4o's
category scores that the page quotes from Table 2 are marked beside them: where one falls outside
the band around GPT-4o's overall score, the category really is harder or easier for it.
"""
from __future__ import annotations

from explainers import stats
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.scene import Linear, Rows, figure, hwhisker, mark, percent_axis_x

from ..figures import CATEGORY_SIZES, GPT4O_CATEGORIES, GPT4O_OVERALL


def params(context: dict) -> tuple[Param, ...]:
    return (
        Param("score", "Overall score", "number", GPT4O_OVERALL / 100, 0.0, 1.0, 0.001, percent=True,
              help="Starts at GPT-4o's 72.6% (Table 2)."),
        Param("band", "Band", "choice", "wilson", choices=(("wilson", "Wilson"), ("normal", "normal"))),
    )


def view(state: dict, context: dict) -> dict:
    category_sizes = context.get("category_sizes") or CATEGORY_SIZES
    score = state["score"]
    width = state["width"]
    ordered = sorted(category_sizes.items(), key=lambda item: (-item[1], item[0]))
    rows = Rows.fit([f"{name} ({n:,})" for name, n in ordered], width)
    pitch = rows.name_height + 24
    x = Linear((0, 1), (rows.x0, rows.x1))
    marks, summary, bands = [], [], {}
    for row, (name, n) in enumerate(ordered):
        top = 8 + row * pitch
        y = top + rows.name_height + 12
        low, high = stats.confidence_interval(score, n, 0.95, state["band"])
        bands[name] = (low, high)
        text = f"{name} ({n:,} questions): {100 * score:.1f}% would be known to ±{50 * (high - low):.1f} points"
        children = [hwhisker(x(low), x(high), y, "fig-whisker"),
                    mark("circle", {"cx": x(score), "cy": y, "r": 4, "class": "fig-dot"}),
                    rows.name(top + 4, 16, f"{name} ({n:,})")]
        if name in GPT4O_CATEGORIES:
            reported = GPT4O_CATEGORIES[name] / 100
            outside = not low <= reported <= high
            text += (f"; GPT-4o scored {100 * reported:.1f}% here (Table 2), "
                     f"{'outside' if outside else 'inside'} that band")
            children.append(mark("rect", {"x": x(reported) - 4, "y": y - 4, "width": 8, "height": 8,
                                          "class": "reported-score"}))
        summary.append(text + ".")
        marks.append(mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text},
                          children=children))
    bottom = 8 + len(ordered) * pitch + 4
    marks += percent_axis_x(x, bottom, step=25)
    narrowest, widest = ordered[0], ordered[-1]
    summary.append(f"The band is narrowest in {narrowest[0]} ({narrowest[1]:,} questions) and widest in "
                   f"{widest[0]} ({widest[1]:,}); squares mark GPT-4o's category scores from Table 2.")
    return {
        "summary": summary,
        "figure": figure(width, bottom + 30, "95% band of an overall score in each category, from its size", marks,
                         role="group"),
        "numbers": {"bands": bands},
    }


WIDGET = Widget(
    name="category-bars",
    title="Category bars: how precisely each category's score is known",
    blurb="The same score has a wide band on history's 381 questions and a narrow one on math's 1,351.",
    height=620, params=params, view=view, accepts={"category_sizes": sizes}, style=True,
)
