"""Guessing floor: four options against ten, on an MMLU-Pro category's real number of questions.

For each K it draws the exact binomial range a pure guesser lands in (95 % of runs) and the
expected score of a reader who knows a share q of the answers and guesses the rest,
q + (1 − q)/K (explainers.lesson.expected_score).
"""
from __future__ import annotations

from explainers import lesson, stats
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.layout import GAP, Box
from widgetkit.scene import X_AXIS_OVERHANG, Linear, figure, handle, label, legend, percent_axis_x, rect, vline
from widgetkit.words import count, pct, points

from ..figures import CATEGORY_SIZES

OPTION_COUNTS = (4, 10)


def params(context: dict) -> tuple[Param, ...]:
    category_sizes = context.get("category_sizes") or CATEGORY_SIZES
    return (
        Param("category", "Category (its number of test questions)", "choice", "math",
              choices=tuple((name, f"{name} ({count(size)})") for name, size in
                            sorted(category_sizes.items(), key=lambda item: -item[1]))),
        Param("known", "Share of answers the reader knows", "number", 0.3, 0.0, 1.0, 0.01, percent=True),
    )


def view(state: dict, context: dict) -> dict:
    category_sizes = context.get("category_sizes") or CATEGORY_SIZES
    n, known = category_sizes[state["category"]], state["known"]
    width = state["width"]
    x = Linear((0, 1), (X_AXIS_OVERHANG, width - X_AXIS_OVERHANG))
    marks, summary, numbers = [], [], {"n": n}
    known_param = {p.name: p for p in params(context)}["known"]
    for row, options in enumerate(OPTION_COUNTS):
        top = 40 + row * 56
        low, high = stats.chance_band(n, options, 0.95, "exact")
        expected = lesson.expected_score(known, options)
        numbers[f"k{options}"] = {"low": low, "high": high, "expected": expected}
        name = "MMLU, 4 options" if options == 4 else "MMLU-Pro, 10 options"
        marks += [
            label(x(0) + 2, top - 6, name, "fig-tick fig-key", "start"),
            rect(x(low), x(high), top, top + 20, "fig-band-guess",
                 f"{name}: a guesser lands between {pct(low)} and {pct(high)}"),
            vline(x(1 / options), top - 2, top + 22, "fig-ref fig-chance"),
            # The expected score is a handle for the share known: it runs from chance (knows none)
            # to 100 % (knows all), linearly, so two stops map it.
            handle(known_param, known, f"{pct(known, 0)} known: {name} expects {pct(expected)}",
                   [(x(1 / options), 0.0), (x(1), 1.0)], Box(x(expected) - 6, top + 4, x(expected) + 6, top + 16),
                   [], at=(x(expected), top + 10), hint="drag a dot: how much is known" if options == OPTION_COUNTS[0] else None,
                   key=f"known-{options}", label=f"Share of answers the reader knows ({name})"),
        ]
        summary.append(
            f"With {options} options, a pure guesser on {state['category']} ({count(n)} questions) lands between "
            f"{pct(low)} and {pct(high)} in 95% of runs (exact binomial); a reader who knows {pct(known, 0)} "
            f"of the answers and guesses the rest expects {pct(expected)}.")
    lift = numbers["k4"]["expected"] - numbers["k10"]["expected"]
    summary.append(f"Six more options take {points(lift)} of lucky guesses away from that reader.")
    marks += percent_axis_x(x, 160)
    keys, end = legend([("box", "fig-band-guess", "a pure guesser (95% of runs)"), ("line", "fig-ref fig-chance", "chance"),
                        ("knob", "", "the partly informed reader")], x(0), 186, x(1) - x(0))
    marks += keys
    return {
        "summary": summary,
        "figure": figure(width, round(end + GAP), "Guessing ranges and expected scores with four and with ten options", marks,
                         role="group"),
        "numbers": numbers,
    }


WIDGET = Widget(
    name="guessing-floor",
    title="Guessing floor: four options against ten",
    blurb=("Where a pure guesser lands on a real MMLU-Pro category, and what a partly informed reader scores, "
           "with four options and with ten."),
    height=560, params=params, view=view, accepts={"category_sizes": sizes},
)
