"""Category bars: how precisely a score is known in each MMLU-Pro category, from its real size.

Two sets of results, one row per category. The paper's: GPT-4o's own score in each category (the
authors' dataset card) is the mark, with its 95 % band around it (normal or Wilson,
explainers.stats.confidence_interval on that category's number of test questions), and a line at
the overall score (72.6 %, which a reader drags): a category whose band leaves that line out really
is harder or easier for it. The live model's: its accuracy in each
category of the run published with this site (benchmarks/mmlu_pro/runs/), with the band from the number
of questions it scored there and the chance rate of those questions beside it.
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers import checks, stats, weighted_accuracy
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.layout import GAP, Box, text_width
from widgetkit.scene import Linear, Rows, figure, handle, hwhisker, label, legend, mark, percent_axis_x, vline
from widgetkit.words import listed, pct

from ..figures import CATEGORY_SIZES, GPT4O_CATEGORIES, GPT4O_OVERALL

BAND_NAMES = {"wilson": "Wilson", "normal": "normal"}


def run_summary(name: str, value: object) -> dict:
    """A published run, per category: {"model", "shots", "sample", "categories": {name: [right, questions, chance]}}."""
    run = checks.mapping(name, value)
    for key in ("model", "sample"):
        checks.text(f"{name}.{key}", run.get(key))
    checks.whole(f"{name}.shots", run.get("shots"), minimum=0)
    for category, counts in checks.mapping(f"{name}.categories", run.get("categories")).items():
        where = f"{name}.categories[{category!r}]"
        if not (isinstance(counts, list) and len(counts) == 3):
            raise ValueError(f"{where} must be [right, questions, chance rate]")
        right, n = checks.whole(f"{where} right", counts[0], minimum=0), checks.whole(f"{where} questions", counts[1])
        if right > n:
            raise ValueError(f"{where} has more right answers than questions")
        checks.probability(f"{where} chance rate", counts[2])
    return run


def params(context: dict) -> tuple[Param, ...]:
    shown = [("paper", "GPT-4o, the paper's figures")]
    if context.get("live_run"):
        shown.append(("run", f"our model, {context['live_run']['shots']}-shot sample"))  # whole at 320 px
    return (
        Param("results", "Results", "choice", "paper", choices=tuple(shown)),
        Param("score", "Overall score", "number", GPT4O_OVERALL / 100, 0.0, 1.0, 0.001, percent=True,
              help="For the paper's figures, the line each category's band is compared with: "
                   "GPT-4o's 72.6% (Table 2) to start."),
        Param("band", "Band", "choice", "wilson", choices=tuple(BAND_NAMES.items())),
    )


@dataclass(frozen=True)
class Grid:
    """Where the category rows go: their names (beside each row, or on it) and the plot's x scale."""
    rows: Rows
    x: Linear
    width: float

    def top(self, number: int) -> float:
        return 8 + number * 22

    def middle(self, number: int) -> float:
        """The height of row ``number``'s whisker."""
        return self.top(number) + 12

    def name(self, number: int, name: str, n: int, low: float, high: float) -> dict:
        """Row ``number``'s name and size: beside it in a column of names; on a phone (Rows above),
        on the row's own line, in the plot, so the plot has the frame's whole width: left of the
        row's marks (``low`` to ``high``) where it fits there, else right of them; the name alone
        where neither has room for the size too (the row's description gives it)."""
        words = f"{name} ({n:,})"
        if self.rows.beside:
            return self.rows.name(self.top(number) + 4, 16, words)
        left, right = self.rows.x0, self.x(high) + 2 * GAP
        for text in (words, name):
            wide = text_width(text, "fig-tick")
            fits = {left: left + wide + 2 * GAP <= self.x(low), right: right + wide + GAP <= self.width}
            for start in (left, right):
                if fits[start]:
                    return label(start, self.middle(number) + 4, text, "fig-tick fig-halo fig-key", "start")
        return label(left, self.middle(number) + 4, name, "fig-tick fig-halo fig-key", "start")


def row(number: int, grid: Grid, name: str, n: int, centre: float, low: float, high: float, text: str,
        beside: dict | None = None, chance: float | None = None) -> dict:
    """One category: its band as a whisker, its score as a dot, its name, and the mark of a value
    beside them (the chance rate, ``chance``)."""
    x, y = grid.x, grid.middle(number)
    marked = [low, high] + ([chance] if chance is not None else [])
    children = [hwhisker(x(low), x(high), y, "fig-whisker"),
                mark("circle", {"cx": x(centre), "cy": y, "r": 4, "class": "fig-dot"}),
                grid.name(number, name, n, min(marked), max(marked))]
    return mark("g", {"class": "fig-point", "tabindex": "0", "role": "img", "aria-label": text},
                children=children + ([beside] if beside else []))


def paper_rows(state: dict, ordered: list[tuple[str, int]], grid: Grid) -> tuple[list, list, dict, dict]:
    """GPT-4o's score in each category with its 95 % band there, against the chosen overall score."""
    overall, marks, summary, bands, scores = state["score"], [], [], {}, {}
    sides = {"below": [], "above": []}
    for number, (name, n) in enumerate(ordered):
        # A category the dataset card gives no score for (sizes from other files) shows the overall score's band.
        score = GPT4O_CATEGORIES[name] / 100 if name in GPT4O_CATEGORIES else overall
        low, high = stats.confidence_interval(score, n, 0.95, state["band"])
        bands[name], scores[name] = (low, high), score
        side = "below" if high < overall else "above" if low > overall else "within"
        if name in GPT4O_CATEGORIES:
            against = f"the overall {pct(overall)} is within it" if side == "within" else f"{side} the overall {pct(overall)}"
            text = (f"{name} ({n:,} questions): GPT-4o scored {pct(score)} (dataset card), 95% band {pct(low)} to "
                    f"{pct(high)}, so {against}")
            if side != "within":
                sides[side].append(name)
        else:
            text = f"{name} ({n:,} questions): {pct(score)} would be known to ±{50 * (high - low):.1f} points"
        summary.append(text + ".")
        marks.append(row(number, grid, name, n, score, low, high, text))
    narrowest, widest = ordered[0][0], ordered[-1][0]
    half = {name: 50 * (bands[name][1] - bands[name][0]) for name in (narrowest, widest)}
    summary.insert(0, f"GPT-4o's {narrowest} score, {pct(scores[narrowest])}, is known to ±{half[narrowest]:.1f} "
                      f"points on {ordered[0][1]:,} questions; its {widest} score, {pct(scores[widest])}, only to "
                      f"±{half[widest]:.1f} on {ordered[-1][1]:,}.")
    apart = [f"{listed(names)} {side} it" for side, names in sides.items() if names]
    summary.insert(1, f"Against an overall {pct(overall)}, " + (
        f"the bands of {'; '.join(apart)}: those categories really are harder or easier for it."
        if apart else "every category's band holds it: none is told apart from the overall score."))
    summary.append(f"Dots mark GPT-4o's category scores as the authors' dataset card gives them (5-shot chain of "
                   f"thought); the band is narrowest in {narrowest} ({ordered[0][1]:,} questions) and widest in "
                   f"{widest} ({ordered[-1][1]:,}) for the same score.")
    return marks, summary, bands, {"scores": scores}


def run_rows(state: dict, run: dict, ordered: list[tuple[str, int]], grid: Grid) -> tuple[list, list, dict, dict]:
    """The live model's accuracy in each category it was run on, its band from the questions scored, chance beside it."""
    band = BAND_NAMES[state["band"]]
    scored = [(name, size) for name, size in ordered if name in run["categories"]]
    marks, summary, bands, accuracies = [], [], {}, {}
    for number, (name, size) in enumerate(scored):
        right, n, chance = run["categories"][name]
        accuracy = right / n
        low, high = stats.confidence_interval(accuracy, n, 0.95, state["band"])
        bands[name], accuracies[name] = (low, high), accuracy
        verdict = "above" if low > chance else "below" if high < chance else "not told apart from"
        text = (f"{name} ({n:,} of its {size:,} questions scored): {right} right, {pct(accuracy)}, 95% band "
                f"{pct(low)} to {pct(high)} ({band}); chance for these questions {pct(chance)}, so {verdict} chance")
        summary.append(text + ".")
        x, y = grid.x, grid.middle(number)
        # Chance is a tick across the whisker rather than a square, so the dot never hides it.
        tick = mark("line", {"x1": x(chance), "x2": x(chance), "y1": y - 7, "y2": y + 7, "class": "chance-rate"})
        marks.append(row(number, grid, name, n, accuracy, low, high, text, tick, chance))
    counts = [run["categories"][name][1] for name, _ in scored]
    right = sum(run["categories"][name][0] for name, _ in scored)
    overall = right / sum(counts)
    low, high = stats.confidence_interval(overall, sum(counts), 0.95, state["band"])
    chance = weighted_accuracy(counts, [run["categories"][name][2] for name, _ in scored])
    whole_test = weighted_accuracy([size for _, size in scored], [accuracies[name] for name, _ in scored])
    summary.insert(0, f"{run['model']} is right on {pct(overall)} of the {sum(counts):,} questions scored, "
                      f"against a chance rate of {pct(chance)}.")
    summary.append(f"{run['model']}, {run['shots']}-shot, scored by its letter probabilities, not the paper's "
                   f"5-shot chain of thought; the questions are {run['sample']}.")
    summary.append(f"Over those {sum(counts):,} questions it is right on {pct(overall)} (95% band {pct(low)} to "
                   f"{pct(high)}, {band}) against a chance rate of {pct(chance)}; weighting each category by its "
                   f"real size gives {pct(whole_test)} as the estimate for the whole test. Ticks mark chance.")
    return marks, summary, bands, {"accuracy": accuracies, "overall": overall, "whole_test": whole_test}


def view(state: dict, context: dict) -> dict:
    category_sizes = context.get("category_sizes") or CATEGORY_SIZES
    ordered = sorted(category_sizes.items(), key=lambda item: (-item[1], item[0]))
    rows = Rows.fit([f"{name} ({n:,})" for name, n in ordered], state["width"], share=0.6)
    grid = Grid(rows, Linear((0, 1), (rows.x0, rows.x1)), state["width"])
    run = context.get("live_run") if state["results"] == "run" else None
    if run and not set(run["categories"]) & set(category_sizes):
        run = None  # a run of none of these categories: show the paper's figures instead
    if run:
        marks, summary, bands, numbers = run_rows(state, run, ordered, grid)
        label = f"{run['model']}'s accuracy in each category with its 95% band, and the chance rate"
    else:
        marks, summary, bands, numbers = paper_rows(state, ordered, grid)
        label = "GPT-4o's score in each category with its 95% band, against the overall score"
    bottom = grid.top(len(marks)) + 4
    x = grid.x
    # Gridlines at the axis's ticks, under the rows, so a dot's value can be read across.
    grid_lines = [vline(x(share / 100), 4, bottom, "fig-grid") for share in range(0, 101, 25)]
    marks = grid_lines + marks + percent_axis_x(x, bottom, step=25)
    if not run:  # the overall score each band is compared with: a line, and its knob on the axis drags and keys it
        score, setting = state["score"], {p.name: p for p in params(context)}["score"]
        marks.insert(len(grid_lines), handle(
            setting, score, pct(score), [(x(0), 0.0), (x(1), 1.0)], Box(x(score) - 6, bottom - 12, x(score) + 6, bottom + 4),
            [vline(x(score), grid.top(0), bottom, "fig-ref overall-score")], at=(x(score), bottom),
            hint="drag to move the overall score", label="Overall score (the line the bands are compared with)"))
    items = ([("dot", "fig-dot", "score"), ("whisker", "fig-whisker", "95% band"), ("line", "chance-rate", "chance rate")]
             if run else [("dot", "fig-dot", "GPT-4o's score (dataset card)"), ("whisker", "fig-whisker", "95% band"),
                          ("knob", "", "overall score")])
    keys, end = legend(items, GAP, bottom + 30, state["width"] - 2 * GAP)
    marks += keys
    return {
        "summary": summary,
        "figure": figure(state["width"], round(end + GAP), label, marks, role="group"),
        "numbers": {"bands": bands, **numbers},
    }


WIDGET = Widget(
    name="category-bars",
    title="Category bars: how precisely each category's score is known",
    blurb="GPT-4o's score in each category with its band: wide on history's 381 questions, narrow on "
          "math's 1,351; or the live model's own run.",
    height=620, params=params, view=view, accepts={"category_sizes": sizes, "live_run": run_summary}, style=True,
    primary=1,  # fourteen rows of chart: the results chooser alone goes under them
)
