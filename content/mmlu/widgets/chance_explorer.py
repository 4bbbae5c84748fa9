"""Chance explorer: is a score on a subject of n questions above guessing?"""
from __future__ import annotations

from benchmarks.mmlu.figures import reference
from explainers import stats
from widgetkit import Param, Widget
from widgetkit.context import titled_sizes
from widgetkit.intervals import BANDS, level_param
from widgetkit.layout import GAP, Box, text_width
from widgetkit.scene import X_AXIS_OVERHANG, Linear, Placer, figure, handle, key, label, percent_axis_x, rect, vline
from widgetkit.words import count, level_text, pct, points

QUESTION_STOPS = tuple(round(10 ** (k / 8)) for k in range(35))  # 1 to 20,000 questions, evenly on a log scale


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


def questions_handle(param: Param, state: dict, x: Linear, low: float, high: float) -> dict | None:
    """The score band's far edge as a handle for the number of questions: pulled out, the band is
    that of fewer questions. The edge with more room is used (the upper one for a score up to
    50 %); its stops are the same band's edge at question counts spread evenly on a log scale.
    None where the band does not change with the count (a normal band at 0 % or 100 %)."""
    score, level, upper = state["score"], float(state["level"]), state["score"] <= 0.5
    stops: list[tuple[float, float]] = []
    for n in (*QUESTION_STOPS, param.maximum):
        edge = stats.confidence_interval(score, n, level, state["band"])[1 if upper else 0]
        if stops and abs(x(edge) - stops[-1][0]) < 0.05:
            stops[-1] = (x(edge), n)  # the same pixel (an edge held at 0 or 100 %): the larger count
        else:
            stops.append((x(edge), n))
    if len(stops) < 2:
        return None
    edge = x(high if upper else low)
    bar = rect(edge - 1.5, edge + 1.5, 74, 100, "fig-grip-bar")
    return handle(param, state["n"], f"{count(state['n'])} questions", stops, Box(edge - 6, 78, edge + 6, 102),
                  [bar], at=(edge, 74), key="n",
                  label="Questions in the subject (the score band's edge)")


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
        vline(x(chance), 34, 110, "fig-ref fig-chance"),
        vline(x(expert), 34, 110, "fig-ref fig-expert"),
    ]
    # The score and the band's edge are handles: drag or key them to set the score and the questions.
    settings = {p.name: p for p in params(context)}
    questions = questions_handle(settings["n"], state, x, low, high)
    marks += [questions] if questions else []
    marks.append(handle(settings["score"], score, pct(score), [(x(0), 0.0), (x(1), 1.0)],
                        Box(x(score) - 6, 84, x(score) + 6, 96), [], at=(x(score), 90),
                        hint="drag the dot to set the score"))
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
                                   "against chance and expert lines", marks, role="group"),
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
