"""Chance explorer: is a score on a subject of n questions above guessing?"""
from __future__ import annotations

from benchmarks.mmlu.figures import reference
from explainers import stats
from widgetkit import Param, Widget
from widgetkit.context import titled_sizes
from widgetkit.intervals import BANDS, level_param
from widgetkit.layout import GAP, text_width
from widgetkit.scene import X_AXIS_OVERHANG, Linear, Placer, figure, key, label, mark, percent_axis_x, rect, title, vline
from widgetkit.words import count, level_text, pct, points


def params(context: dict) -> tuple[Param, ...]:
    subjects = context.get("subjects", {})
    return (
        Param("n", "Questions in the subject", "int", 100, 1, 20000, 1, scale="log",
              help="MMLU subjects have 100 to 1,534 test questions; the whole test has 14,042."),
        Param("score", "Measured score", "number", 0.3, 0.0, 1.0, 0.005, percent=True),
        Param("subject", "Take the number of questions from a subject", "choice", "",
              choices=(("", "(none: set it yourself)"),) + tuple(
                  (name, f"{info['title']} ({count(info['test'])})") for name, info in sorted(subjects.items()))),
        Param("options", "Answer options per question", "choice", "4",
              choices=(("4", "4 (MMLU)"), ("10", "10 (MMLU-Pro)"))),
        level_param(),
        Param("band", "Score band", "choice", "normal", choices=BANDS),
        Param("guess", "Guessing range", "choice", "normal",
              choices=(("normal", "normal approximation"), ("exact", "exact binomial"))),
    )


def normalise(state: dict, context: dict) -> tuple[dict, list[str]]:
    """A chosen subject sets the number of questions from the data."""
    if state["subject"]:
        return {**state, "n": context["subjects"][state["subject"]]["test"]}, []
    return state, []


def band_name(start: float, end: float, baseline: float, text: str, width: float) -> dict:
    """A band's name beside it: after its end where it fits in the figure, else before its start."""
    if end + 6 + text_width(text, "fig-tick") <= width - GAP:
        return label(end + 6, baseline, text, "fig-tick fig-halo", "start")
    return label(max(start - 6, text_width(text, "fig-tick") + GAP), baseline, text, "fig-tick fig-halo", "end")


def view(state: dict, context: dict) -> dict:
    subjects = context.get("subjects", {})
    n, score = state["n"], state["score"]
    options, level = int(state["options"]), float(state["level"])
    low, high = stats.confidence_interval(score, n, level, state["band"])
    guess_low, guess_high = stats.chance_band(n, options, level, state["guess"])
    distinct = stats.is_distinguishable_from_chance(score, n, options, level, state["band"])
    se = stats.standard_error(score, n)
    chance, expert = 1 / options, reference("expert")

    where = (f"on {subjects[state['subject']]['title']} ({count(n)} test questions)" if state["subject"]
             else f"on {count(n)} questions")
    verdict = (
        f"The band leaves out the chance rate of {pct(chance, 0)}, so this score can be told apart from guessing."
        if distinct else
        f"The band covers the chance rate of {pct(chance, 0)}, so this score cannot be told apart from guessing."
    )
    summary = [
        f"A score of {pct(score)} {where} has a {level_text(level)} band from {pct(low)} to {pct(high)} "
        f"(standard error {points(se)}).",
        verdict,
        f"A pure guesser with {options} options would land between {pct(guess_low)} and {pct(guess_high)} "
        f"in {level_text(level)} of runs; the paper's estimated expert level is {pct(expert)} (Section 3).",
    ]

    width = state["width"]
    x = Linear((0, 1), (X_AXIS_OVERHANG, width - X_AXIS_OVERHANG))
    marks = [
        rect(x(guess_low), x(guess_high), 46, 66, "fig-band-guess",
             f"Guessing range: {pct(guess_low)} to {pct(guess_high)}"),
        rect(x(low), x(high), 80, 100, "fig-band-score distinct" if distinct else "fig-band-score",
             f"Score band: {pct(low)} to {pct(high)}"),
        mark("circle", {"cx": x(score), "cy": 90, "r": 6, "class": "fig-dot"}, children=[title(f"Score {pct(score)}")]),
        vline(x(chance), 34, 110, "fig-ref fig-chance"),
        vline(x(expert), 34, 110, "fig-ref fig-expert"),
    ]
    # Each band's name goes beside it, never on it: right of its end where that fits, else left of its
    # start (haloed, so a line crossing it does not strike it through). Each line's name sits over it,
    # moved in from the edge, or a line higher if it would meet the other's.
    named = [band_name(x(guess_low), x(guess_high), 60, "guessing", width),
             band_name(x(low), x(high), 94, "score", width)]
    names = Placer(width, 140)
    for value, text in ((chance, f"chance {pct(chance, 0)}"), (expert, f"expert {pct(expert)}")):
        named.append(names.near(text, "fig-ref-label", x(value), [29, 14]))
    marks.append(key(named))
    marks += percent_axis_x(x, 112)
    return {
        "summary": summary,
        "figure": figure(width, 140, f"Score {pct(score)} with its band {pct(low)} to {pct(high)} "
                                   "against chance and expert lines", marks),
        "numbers": {"low": low, "high": high, "se": se, "guess_low": guess_low, "guess_high": guess_high,
                    "distinguishable": distinct, "n": n},
    }


WIDGET = Widget(
    name="chance-explorer",
    title="Chance explorer: is a score above guessing?",
    blurb="Set a subject's number of questions and a score; the band is the range the score could come from by luck.",
    height=720, params=params, normalise=normalise, view=view,
    accepts={"subjects": titled_sizes}, script=True,
)
