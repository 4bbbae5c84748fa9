"""View models of the interactive widgets: state schema, numbers, words and drawing for each.

``widget_view(widget, state, context)`` is the one entry point. The server calls it to render a
widget's first view; the browser's Pyodide worker calls the very same function on every input, so
the numbers, the sentences and the SVG geometry are computed once, here, by the explainers
functions. JavaScript only copies the result into the page.

``state`` maps setting names to raw values (URL query text or form values); every value is checked
against the widget's schema and clamped or replaced by its default, with a message saying so.
``context`` carries data the math does not own (subject sizes read from the MMLU files).
"""
from __future__ import annotations

import math

import random
from dataclasses import dataclass
from urllib.parse import urlencode

from . import _checks, calibration, release_gate, scoring, stats
from .paper_data import paper_figures
from .widget_figures import (
    Linear, Log10, figure, hline, hwhisker, label, mark, percent_axis_x, percent_axis_y, rect, title, vline,
    whisker,
)

LEVELS = (("0.8", "80 %"), ("0.9", "90 %"), ("0.95", "95 %"), ("0.99", "99 %"))
MAX_LIST_ITEMS = 200
MAX_RAW_CHARS = 4000
MAX_QUESTIONS = 100_000  # the most questions the release gate simulates or accepts


# ---------------------------------------------------------------- schema


@dataclass(frozen=True)
class Param:
    """One setting of a widget, as a form control and as a URL parameter.

    kind: "int" | "number" (clamped to minimum..maximum), "choice" (one of ``choices``),
    "numbers" / "flags" (comma-separated lists of numbers in minimum..maximum / of 0 and 1),
    "set" (comma-separated subset of ``choices``).
    """

    name: str
    label: str
    kind: str
    default: object
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    choices: tuple = ()
    percent: bool = False  # show the value as a percentage next to the control
    help: str = ""

    def as_dict(self) -> dict:
        return {
            "name": self.name, "label": self.label, "kind": self.kind, "default": self.default,
            "minimum": self.minimum, "maximum": self.maximum, "step": self.step,
            "choices": [list(c) for c in self.choices], "percent": self.percent, "help": self.help,
        }


def _shown(raw: object) -> str:
    """A reader's value, shortened for a message (messages are always rendered as text)."""
    text = str(raw)
    return text if len(text) <= 30 else text[:27] + "…"


def _parse_number(param: Param, raw: str, messages: list[str]):
    try:
        value = float(raw)
    except ValueError:
        messages.append(f"{param.label}: “{_shown(raw)}” is not a number; using {param.default}.")
        return param.default
    if value != value or value in (float("inf"), float("-inf")):
        messages.append(f"{param.label}: “{_shown(raw)}” is not a finite number; using {param.default}.")
        return param.default
    if param.kind == "int":
        if value != int(value):
            messages.append(f"{param.label}: {_shown(raw)} is not a whole number; rounded to {round(value)}.")
        value = int(round(value))
    low, high = param.minimum, param.maximum
    if value < low or value > high:
        clamped = min(max(value, low), high)
        clamped = int(clamped) if param.kind == "int" else clamped
        messages.append(f"{param.label} must be between {low:g} and {high:g}; {_shown(raw)} was changed to {clamped:g}.")
        value = clamped
    return value


def _parse_list(param: Param, raw: str, messages: list[str]):
    items = [item.strip() for item in raw.split(",") if item.strip()]
    if len(items) > MAX_LIST_ITEMS:
        messages.append(f"{param.label}: only the first {MAX_LIST_ITEMS} values are used.")
        items = items[:MAX_LIST_ITEMS]
    values = []
    for item in items:
        if param.kind == "flags":
            if item not in ("0", "1"):
                messages.append(f"{param.label}: “{_shown(item)}” must be 1 (right) or 0 (wrong); it was left out.")
                continue
            values.append(int(item))
            continue
        try:
            number = float(item)
        except ValueError:
            number = None
        if number is None or not param.minimum <= number <= param.maximum:
            messages.append(f"{param.label}: “{_shown(item)}” is not a number from {param.minimum:g} to {param.maximum:g}; it was left out.")
            continue
        values.append(number)
    if not values:
        messages.append(f"{param.label}: no usable values; using the default.")
        return list(param.default)
    return values


def parse_state(params: tuple[Param, ...], raw: dict) -> tuple[dict, list[str]]:
    """Check raw settings against the schema: (clean state, messages for the reader).

    Missing settings take their default silently; unknown names are ignored (embedding sites may
    add their own query parameters). Nothing raises: bad values become defaults or are clamped.
    """
    state: dict = {}
    messages: list[str] = []
    for param in params:
        value = raw.get(param.name)
        if value is None or value == "" and param.kind != "set":
            state[param.name] = list(param.default) if isinstance(param.default, (list, tuple)) else param.default
            continue
        text = str(value)[:MAX_RAW_CHARS].strip()
        if param.kind in ("int", "number"):
            state[param.name] = _parse_number(param, text, messages)
        elif param.kind == "choice":
            allowed = [c[0] for c in param.choices]
            if text in allowed:
                state[param.name] = text
            else:
                messages.append(f"{param.label}: “{_shown(text)}” is not one of the choices; using the default.")
                state[param.name] = param.default
        elif param.kind == "set":
            allowed = [c[0] for c in param.choices]
            picked = [item.strip() for item in text.split(",") if item.strip()]
            unknown = [item for item in picked if item not in allowed]
            if unknown:
                messages.append(f"{param.label}: “{_shown(unknown[0])}” is not one of the choices; it was left out.")
            state[param.name] = [c for c in allowed if c in picked]
        else:
            state[param.name] = _parse_list(param, text, messages)
    return state, messages


def state_query(params: tuple[Param, ...], state: dict) -> str:
    """The URL query that reproduces ``state`` (settings at their default are left out)."""
    pairs = []
    for param in params:
        value = state[param.name]
        default = list(param.default) if isinstance(param.default, (list, tuple)) else param.default
        if value == default:
            continue
        if isinstance(value, list):
            value = ",".join(_plain(v) for v in value)
        pairs.append((param.name, _plain(value)))
    return urlencode(pairs, safe=",")


def _plain(value: object) -> str:
    """A value as short URL text: 0.3 not 0.30000000000000004, 100 not 100.0."""
    if isinstance(value, float):
        text = f"{value:.6g}"
        return text
    return str(value)


# ---------------------------------------------------------------- words


def pct(share: float, digits: int = 1) -> str:
    """A share (0–1) as a percentage, the way the page writes them: 0.3 → "30.0%"."""
    return f"{100 * share:.{digits}f}%"


def points(share: float, digits: int = 1) -> str:
    """A difference of shares as percentage points: 0.008 → "0.8 points"."""
    return f"{100 * share:.{digits}f} points"


def count(n: int) -> str:
    return f"{n:,}"


def _level_text(level: float) -> str:
    return f"{100 * level:g}%"


def _reference(name: str) -> float:
    return paper_figures()["reference_points"][name]["accuracy"] / 100


# ---------------------------------------------------------------- chance explorer


def _chance_params(context: dict) -> tuple[Param, ...]:
    subjects = context.get("subjects", {})
    return (
        Param("n", "Questions in the subject", "int", 100, 1, 20000, 1,
              help="MMLU subjects have 100 to 1,534 test questions; the whole test has 14,042."),
        Param("score", "Measured score", "number", 0.3, 0.0, 1.0, 0.005, percent=True),
        Param("subject", "Take the number of questions from a subject", "choice", "",
              choices=(("", "(none: set it yourself)"),) + tuple(
                  (name, f"{info['title']} ({count(info['test'])})") for name, info in sorted(subjects.items()))),
        Param("options", "Answer options per question", "choice", "4",
              choices=(("4", "4 (MMLU)"), ("10", "10 (MMLU-Pro)"))),
        Param("level", "Confidence level", "choice", "0.95", choices=LEVELS),
        Param("band", "Score band", "choice", "normal",
              choices=(("normal", "normal (score ± z standard errors)"), ("wilson", "Wilson score interval"))),
        Param("guess", "Guessing range", "choice", "normal",
              choices=(("normal", "normal approximation"), ("exact", "exact binomial"))),
    )


def _chance_view(state: dict, context: dict) -> dict:
    subjects = context.get("subjects", {})
    if state["subject"]:
        state["n"] = subjects[state["subject"]]["test"]
    n, score = state["n"], state["score"]
    options, level = int(state["options"]), float(state["level"])
    low, high = stats.confidence_interval(score, n, level, state["band"])
    guess_low, guess_high = stats.chance_band(n, options, level, state["guess"])
    distinct = stats.is_distinguishable_from_chance(score, n, options, level, state["band"])
    se = stats.standard_error(score, n)
    chance, expert = 1 / options, _reference("expert")

    where = f"on {subjects[state['subject']]['title']} ({count(n)} test questions)" if state["subject"] else f"on {count(n)} questions"
    verdict = (
        f"The band leaves out the chance rate of {pct(chance, 0)}, so this score can be told apart from guessing."
        if distinct else
        f"The band covers the chance rate of {pct(chance, 0)}, so this score cannot be told apart from guessing."
    )
    summary = [
        f"A score of {pct(score)} {where} has a {_level_text(level)} band from {pct(low)} to {pct(high)} "
        f"(standard error {points(se)}).",
        verdict,
        f"A pure guesser with {options} options would land between {pct(guess_low)} and {pct(guess_high)} "
        f"in {_level_text(level)} of runs; the paper's estimated expert level is {pct(expert)} (Section 3).",
    ]

    x = Linear((0, 1), (30, 530))
    marks = [
        rect(x(guess_low), x(guess_high), 46, 66, "fig-band-guess",
             f"Guessing range: {pct(guess_low)} to {pct(guess_high)}"),
        label(x(0) + 2, 60, "guessing", "fig-tick", "start"),
        rect(x(low), x(high), 80, 100, "fig-band-score distinct" if distinct else "fig-band-score",
             f"Score band: {pct(low)} to {pct(high)}"),
        label(x(0) + 2, 94, "score", "fig-tick", "start"),
        mark("circle", {"cx": x(score), "cy": 90, "r": 6, "class": "fig-dot"}, children=[title(f"Score {pct(score)}")]),
        vline(x(chance), 28, 110, "fig-ref fig-chance"),
        label(x(chance), 22, f"chance {pct(chance, 0)}", "fig-ref-label"),
        vline(x(expert), 28, 110, "fig-ref fig-expert"),
        label(x(expert), 22, f"expert {pct(expert)}", "fig-ref-label"),
    ] + percent_axis_x(x, 112)
    return {
        "summary": summary,
        "figure": figure(560, 140, f"Score {pct(score)} with its band {pct(low)} to {pct(high)} against chance and expert lines", marks),
        "numbers": {"low": low, "high": high, "se": se, "guess_low": guess_low, "guess_high": guess_high,
                    "distinguishable": distinct, "n": n},
    }


# ---------------------------------------------------------------- calibration bars


def _calibration_params(context: dict) -> tuple[Param, ...]:
    example = paper_figures()["examples"]["calibration"]
    return (
        Param("conf", "Confidence of each answer", "numbers", tuple(example["confidences"]), 0.0, 1.0, 0.01),
        Param("correct", "Whether each answer was right", "flags", tuple(example["correct"])),
        Param("bins", "Number of confidence groups", "int", 2, 1, 10, 1),
        Param("binning", "How groups are formed", "choice", "equal_count",
              choices=(("equal_count", "equal numbers of answers"), ("fixed_width", "equal confidence ranges"))),
    )


def _calibration_view(state: dict, context: dict) -> dict:
    conf, correct = state["conf"], state["correct"]
    messages = []
    if len(conf) != len(correct):
        used = min(len(conf), len(correct))
        messages.append(f"There are {len(conf)} confidences and {len(correct)} right/wrong marks; the first {used} pairs are used.")
        conf, correct = conf[:used], correct[:used]
        state["conf"], state["correct"] = conf, correct
    if state["binning"] == "equal_count" and state["bins"] > len(conf):
        messages.append(f"At most {len(conf)} groups fit {len(conf)} answers; using {len(conf)}.")
        state["bins"] = len(conf)
    bins, binning = state["bins"], state["binning"]
    groups = calibration.calibration_bins(conf, correct, bins, binning)
    average = calibration.average_confidence(conf)
    acc = math.fsum(correct) / len(correct)
    gap = calibration.calibration_gap(conf, correct)
    rms = calibration.rms_calibration_error(conf, correct, bins, binning)

    direction = "more" if average > acc else "less"
    summary = [
        f"{len(conf)} answers: average confidence {average:.2f}, accuracy {acc:.2f}; "
        f"the model claims {points(abs(average - acc))} {direction} than it delivers (gap {gap:.2f}).",
        f"RMS calibration error over {len(groups)} confidence group{'s' if len(groups) != 1 else ''}: {rms:.3f}.",
    ] + [
        f"Group {i + 1} ({g['n']} answer{'s' if g['n'] != 1 else ''}): claimed {g['confidence']:.2f}, right {g['accuracy']:.2f}, "
        f"gap {g['accuracy'] - g['confidence']:+.2f}."
        for i, g in enumerate(groups)
    ]

    y = Linear((0, 1), (220, 20))
    left, right = 56, 550
    slot = (right - left) / len(groups)
    bar = min(34, slot / 3)
    marks = percent_axis_y(y, left, right)
    for i, g in enumerate(groups):
        centre = left + slot * (i + 0.5)
        claimed_x, actual_x = centre - bar - 2, centre + 2
        marks += [
            rect(claimed_x, claimed_x + bar, y(0), y(g["confidence"]), "fig-bar-claimed",
                 f"Group {i + 1}: claimed confidence {g['confidence']:.2f}"),
            rect(actual_x, actual_x + bar, y(0), y(g["accuracy"]), "fig-bar-actual",
                 f"Group {i + 1}: accuracy {g['accuracy']:.2f}"),
        ]
        if abs(g["confidence"] - g["accuracy"]) > 1e-9:
            marks.append(rect(actual_x, actual_x + bar, y(g["accuracy"]), y(g["confidence"]), "fig-gap",
                              f"Group {i + 1}: gap {g['accuracy'] - g['confidence']:+.2f}"))
        marks.append(label(centre, 240, f"{g['confidence']:.2f} ({g['n']})", "fig-group-label"))
    marks.append(label((left + right) / 2, 262, "average claimed confidence of each group (answers in it)", "fig-caption"))
    return {
        "summary": summary,
        "messages": messages,
        "figure": figure(560, 270, f"Claimed confidence and accuracy in {len(groups)} confidence groups", marks),
        "numbers": {"average_confidence": average, "accuracy": acc, "gap": gap, "rms": rms, "groups": groups},
    }


# ---------------------------------------------------------------- scaling plot

_SERIES = (
    ("fewshot", "GPT-3 few-shot", "GPT-3", "few-shot"),
    ("zeroshot", "GPT-3 zero-shot", "GPT-3", "zero-shot"),
    ("unifiedqa", "UnifiedQA (transfer)", "UnifiedQA", "transfer"),
)


def _scaling_params(context: dict) -> tuple[Param, ...]:
    return (
        Param("show", "Series shown", "set", tuple(key for key, *_ in _SERIES),
              choices=tuple((key, name) for key, name, *_ in _SERIES)),
    )


def _size(parameters: float) -> str:
    if parameters >= 1e9:
        return f"{parameters / 1e9:g}B"
    return f"{parameters / 1e6:g}M"


def _scaling_view(state: dict, context: dict) -> dict:
    data = paper_figures()["scaling"]["series"]
    chance, expert = _reference("chance"), _reference("expert")
    x = Log10((1e7, 1e12), (60, 540))
    y = Linear((0, 1), (270, 20))
    marks = percent_axis_y(y, 60, 540)
    marks.append(hline(60, 540, 270, "fig-axis"))
    for power in range(7, 13):
        marks.append(vline(x(10 ** power), 270, 275, "fig-axis"))
        marks.append(label(x(10 ** power), 290, _size(10 ** power) if power < 12 else "1T", "fig-tick"))
    marks.append(label(300, 312, "parameters (log scale: each step is ten times more)", "fig-caption"))
    marks += [
        hline(60, 540, y(chance), "fig-ref fig-chance"), label(538, y(chance) - 6, f"chance {pct(chance, 0)}", "fig-ref-label", "end"),
        hline(60, 540, y(expert), "fig-ref fig-expert"), label(538, y(expert) - 6, f"expert {pct(expert)}", "fig-ref-label", "end"),
    ]
    summary = []
    for key, name, model, setting in _SERIES:
        series = next(s for s in data if s["model"] == model and s["setting"] == setting)
        pts = series["points"]
        described = ", ".join(f"{_size(p['parameters'])} {p['accuracy']:.1f}%{' (about)' if p.get('approximate') else ''}" for p in pts)
        if key not in state["show"]:
            summary.append(f"{name}: hidden.")
            continue
        summary.append(f"{name}: {described}.")
        coords = [(x(p["parameters"]), y(p["accuracy"] / 100)) for p in pts]
        if len(coords) > 1:
            marks.append(mark("polyline", {"points": " ".join(f"{a:.1f},{b:.1f}" for a, b in coords),
                                           "class": f"fig-line series-{key}"}))
        for p, (cx, cy) in zip(pts, coords):
            text = f"{name}, {_size(p['parameters'])} parameters: {p['accuracy']:.1f}%"
            marks.append(mark("g", {"class": f"fig-point series-{key}", "tabindex": "0", "role": "img", "aria-label": text}, children=[
                mark("circle", {"cx": cx, "cy": cy, "r": 6}),
                mark("text", {"x": min(cx, 420), "y": cy - 12, "class": "fig-point-label", "text-anchor": "middle"},
                     f"{_size(p['parameters'])}: {p['accuracy']:.1f}%"),
            ]))
    legend_x = 70
    for key, name, *_ in _SERIES:
        if key in state["show"]:
            marks.append(mark("circle", {"cx": legend_x, "cy": 332, "r": 5, "class": f"fig-legend series-{key}"}))
            marks.append(label(legend_x + 9, 337, name, "fig-tick", "start"))
            legend_x += 160
    summary.append(f"Chance is {pct(chance, 0)} and the estimated expert level {pct(expert)} (Section 3); "
                   "accuracies from Table 1 and Appendix A.")
    return {
        "summary": summary,
        "figure": figure(560, 346, "Accuracy against number of parameters, log scale", marks, role="group"),
        "numbers": {"shown": state["show"]},
    }


# ---------------------------------------------------------------- group bars

_GROUP_NAMES = {"humanities": "Humanities", "social_sciences": "Social sciences", "stem": "STEM", "other": "Other"}
_DATA_GROUPS = {"humanities": "humanities", "social_sciences": "social sciences", "stem": "STEM", "other": "other"}


def _interval_params() -> tuple[Param, ...]:
    return (
        Param("level", "Confidence level", "choice", "0.95", choices=LEVELS),
        Param("band", "Band", "choice", "normal",
              choices=(("normal", "normal (score ± z standard errors)"), ("wilson", "Wilson score interval"))),
    )


def _group_params(context: dict) -> tuple[Param, ...]:
    return _interval_params()


def _group_view(state: dict, context: dict) -> dict:
    level, method = float(state["level"]), state["band"]
    table = paper_figures()["table_1"]["rows"]
    sizes = context["group_sizes"]
    models = [row for row in table if row["model"] in ("GPT-3 X-Large", "UnifiedQA")]
    keys = list(_GROUP_NAMES)
    y = Linear((0, 1), (230, 20))
    left, right = 56, 550
    slots = len(keys) + 2
    slot = (right - left) / slots
    stripes = mark("pattern", {"id": "w-stripes", "width": 6, "height": 6, "patternUnits": "userSpaceOnUse",
                               "patternTransform": "rotate(45)"},
                   children=[mark("rect", {"width": 6, "height": 6, "class": "stripe-bg"}), vline(0, 0, 6, "stripe")])
    marks = [mark("defs", children=[stripes])] + percent_axis_y(y, left, right)
    marks.append(hline(left, right, y(_reference("chance")), "fig-ref fig-chance"))
    summary, numbers = [], {}
    for m_index, row in enumerate(models):
        cls = "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b"
        known = [k for k in keys if row[k] is not None]
        phrases = []
        for g_index, k in enumerate(keys):
            xs = left + slot * g_index + slot / 2 + (-30 if m_index == 0 else 2)
            if row[k] is None:
                marks.append(label(xs + 14, y(0) - 6, "n/a", "fig-tick"))
                continue
            acc, n = row[k] / 100, sizes[k]
            low, high = stats.confidence_interval(acc, n, level, method)
            marks.append(rect(xs, xs + 28, y(0), y(acc), cls, f"{row['model']}, {_GROUP_NAMES[k]}: {acc * 100:.1f}% of {count(n)} questions"))
            marks.append(whisker(xs + 14, y(low), y(high)))
            phrases.append(f"{_GROUP_NAMES[k]} {acc * 100:.1f}% ({pct(low)}–{pct(high)}, {count(n)} questions)")
        micro = macro = None
        if len(known) == len(keys):
            accs = [row[k] / 100 for k in keys]
            micro = scoring.weighted_accuracy([sizes[k] for k in keys], accs)
            macro = scoring.plain_mean(accs)
            total = sum(sizes[k] for k in keys)
            low, high = stats.confidence_interval(micro, total, level, method)
            for offset, value, name in ((0, micro, "micro"), (1, macro, "macro")):
                xs = left + slot * (len(keys) + offset) + slot / 2 + (-30 if m_index == 0 else 2)
                marks.append(rect(xs, xs + 28, y(0), y(value), cls, f"{row['model']}, {name} average: {pct(value)}"))
            xs = left + slot * len(keys) + slot / 2 + (-30 if m_index == 0 else 2)
            marks.append(whisker(xs + 14, y(low), y(high)))
            summary.append(
                f"{row['model']}: " + "; ".join(phrases) + ". "
                f"Micro average (every question counts once, weighted by our test files' group sizes): {pct(micro)}; "
                f"macro average (plain mean of the four groups): {pct(macro)}; the paper's Average column: {row['average']:.1f}%."
            )
        else:
            summary.append(f"{row['model']}: the paper's average is {row['average']:.1f}%; its group scores are not in our sources.")
        numbers[row["model"]] = {"micro": micro, "macro": macro}
    short = {"humanities": "Humanities", "social_sciences": "Soc. sci.", "stem": "STEM", "other": "Other"}
    for g_index, k in enumerate(keys):
        marks.append(label(left + slot * (g_index + 0.5), 250, short[k], "fig-group-label"))
    marks.append(label(left + slot * (len(keys) + 0.5), 250, "micro avg", "fig-group-label"))
    marks.append(label(left + slot * (len(keys) + 1.5), 250, "macro avg", "fig-group-label"))
    marks.append(vline(left + slot * len(keys), 20, 255, "fig-divider"))
    for m_index, row in enumerate(models):
        lx = 70 + 170 * m_index
        marks.append(rect(lx, lx + 14, 262, 276, "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b"))
        marks.append(label(lx + 20, 274, row["model"], "fig-tick", "start"))
    summary.append(f"Bands: {_level_text(level)} intervals from each group's number of test questions; "
                   "group scores from Table 1; chance 25%.")
    return {
        "summary": summary,
        "figure": figure(560, 290, "Accuracy by group for GPT-3 X-Large and UnifiedQA, with micro and macro averages", marks),
        "numbers": numbers,
    }


# ---------------------------------------------------------------- subject bars


def _subject_params(context: dict) -> tuple[Param, ...]:
    return _interval_params()


def _subject_view(state: dict, context: dict) -> dict:
    level, method = float(state["level"]), state["band"]
    rows = paper_figures()["subjects"]["rows"]
    sizes = context["subject_sizes"]
    x = Linear((0, 1), (190, 540))
    chance, expert = _reference("chance"), _reference("expert")
    marks = []
    summary = []
    numbers = {}
    for i, row in enumerate(rows):
        acc, n = row["accuracy"] / 100, sizes[row["subject"]]
        low, high = stats.confidence_interval(acc, n, level, method)
        top = 16 + i * 36
        about = "about " if row.get("approximate") else ""
        marks.append(label(182, top + 18, row["name"], "fig-group-label", "end"))
        marks.append(rect(x(0), x(acc), top + 4, top + 26, "fig-bar-model-a", f"{row['name']}: {about}{acc * 100:.1f}% of {count(n)} questions"))
        marks.append(hwhisker(x(low), x(high), top + 15))
        summary.append(f"{row['name']}: {about}{acc * 100:.1f}% on {count(n)} test questions, {_level_text(level)} band {pct(low)} to {pct(high)}.")
        numbers[row["subject"]] = {"low": low, "high": high, "n": n}
    bottom = 16 + len(rows) * 36
    marks += [
        vline(x(chance), 8, bottom, "fig-ref fig-chance"), label(x(chance), bottom + 34, f"chance {pct(chance, 0)}", "fig-ref-label"),
        vline(x(expert), 8, bottom, "fig-ref fig-expert"), label(x(expert), bottom + 34, f"expert {pct(expert)}", "fig-ref-label"),
    ]
    marks += percent_axis_x(x, bottom, step=20)
    summary.append(f"GPT-3 X-Large, few-shot; scores named in Section 4.2; bands from each subject's test size in our data files.")
    return {
        "summary": summary,
        "figure": figure(560, bottom + 42, "GPT-3 accuracy on five named subjects with error bands", marks),
        "numbers": numbers,
    }


# ---------------------------------------------------------------- release gate


def _gate_params(context: dict) -> tuple[Param, ...]:
    return (
        Param("delta", "True change, candidate minus production", "number", -0.008, -0.05, 0.05, 0.001, percent=True),
        Param("corr", "Correlation between the two models' answers", "number", 0.6, 0.0, 0.95, 0.05),
        Param("spread", "How much subjects differ in their change", "number", 0.02, 0.0, 0.1, 0.005, percent=True),
        Param("base", "Production model's accuracy", "number", 0.85, 0.3, 0.95, 0.01, percent=True),
        Param("draw", "Random draw", "int", 1, 1, 999, 1, help="Another draw of the simulated questions."),
    )


def _irwin_hall(rng: random.Random) -> float:
    """An approximately standard normal number made from 12 uniforms with arithmetic only, so the
    browser (Pyodide) and the server draw bit-identical values."""
    return math.fsum(rng.random() for _ in range(12)) - 6.0


def simulate_pair(sizes: dict[str, int], base: float, delta: float, corr: float, spread: float, draw: int):
    """Simulated per-question results of a production and a candidate model (1 right, 0 wrong).

    Each subject gets its own production accuracy (base ± up to 10 points) and its own true change
    (delta plus a normal amount with standard deviation ``spread``); within a question the two
    models' answers have correlation ``corr``. Returns (candidate, baseline, clusters).
    """
    rng = random.Random(draw)
    candidate, baseline, clusters = [], [], []
    for subject in sorted(sizes):
        p_base = min(0.99, max(0.01, base + 0.1 * (2 * rng.random() - 1)))
        p_cand = min(0.99, max(0.01, p_base + delta + spread * _irwin_hall(rng)))
        both = p_base * p_cand + corr * (p_base * (1 - p_base) * p_cand * (1 - p_cand)) ** 0.5
        both = min(max(both, max(0.0, p_base + p_cand - 1)), min(p_base, p_cand))
        only_base, only_cand = p_base - both, p_cand - both
        for _ in range(sizes[subject]):
            u = rng.random()
            if u < both:
                b, c = 1, 1
            elif u < both + only_base:
                b, c = 1, 0
            elif u < both + only_base + only_cand:
                b, c = 0, 1
            else:
                b, c = 0, 0
            baseline.append(b)
            candidate.append(c)
            clusters.append(subject)
    return candidate, baseline, clusters


def _gate_view(state: dict, context: dict) -> dict:
    results = context.get("results")
    if results:
        candidate, baseline, clusters = results["candidate"], results["baseline"], results["subjects"]
        source = f"your loaded results ({count(len(candidate))} questions)"
    else:
        candidate, baseline, clusters = simulate_pair(
            context["subject_sizes"], state["base"], state["delta"], state["corr"], state["spread"], state["draw"])
        source = f"a simulated run over MMLU's {count(len(candidate))} test questions (draw {state['draw']})"
    gate = release_gate.gate_verdict(candidate, baseline, clusters)
    rows = release_gate.subject_deltas(candidate, baseline, clusters)
    delta, se_c, se_p = gate["delta"], gate["clustered_se"], gate["paired_se"]
    verdict = "noise" if gate["verdict"] == "ship" else "investigate"
    multiple = release_gate.GATE_SE_MULTIPLE
    summary = [
        f"Verdict: {verdict}. From {source}: paired delta {delta * 100:+.2f} points, "
        f"clustered standard error {points(se_c, 2)} (paired, unclustered: {points(se_p, 2)}).",
        (f"The delta is within {multiple:g} clustered standard errors of zero (±{points(multiple * se_c, 2)}): ship it."
         if verdict == "noise" else
         f"The delta is beyond {multiple:g} clustered standard errors (±{points(multiple * se_c, 2)}): a person should look."),
        f"Subjects moved from {rows[0]['delta'] * 100:+.1f} points ({rows[0]['subject'].replace('_', ' ')}) "
        f"to {rows[-1]['delta'] * 100:+.1f} points ({rows[-1]['subject'].replace('_', ' ')}).",
    ]
    extent = max(0.05, max(abs(r["delta"]) for r in rows), abs(delta) + multiple * se_c)
    y = Linear((-extent, extent), (230, 20))
    left, right = 64, 550
    digits = 0 if extent >= 0.1 else 1
    step = (right - left) / len(rows)
    marks = [
        rect(left, right, y(delta - multiple * se_c), y(delta + multiple * se_c), "fig-band-gate",
             f"Delta ± {multiple:g} clustered standard errors"),
    ]
    for tick in (-extent, -extent / 2, 0, extent / 2, extent):
        marks.append(hline(left - 5, left, y(tick), "fig-axis"))
        marks.append(label(left - 8, y(tick) + 5, f"{tick * 100:+.{digits}f}" if tick else "0", "fig-tick", "end"))
    for i, row in enumerate(rows):
        x0 = left + i * step + 1
        marks.append(rect(x0, x0 + max(step - 2, 1), y(0), y(row["delta"]),
                          "fig-bar-down" if row["delta"] < 0 else "fig-bar-up",
                          f"{row['subject'].replace('_', ' ')}: {row['delta'] * 100:+.1f} points over {row['n']} questions"))
    marks += [
        vline(left, 20, 230, "fig-axis"),
        hline(left, right, y(0), "fig-axis"),
        hline(left, right, y(delta), "fig-ref fig-delta"),
        label(right - 4, y(delta) - 6, f"delta {delta * 100:+.2f}", "fig-ref-label", "end"),
        label(left, 250, "subjects, sorted by their change (points, candidate minus production)", "fig-caption", "start"),
    ]
    return {
        "summary": summary,
        "figure": figure(560, 260, f"Per-subject deltas sorted, with the clustered band; verdict {verdict}", marks),
        "numbers": {"delta": delta, "clustered_se": se_c, "paired_se": se_p, "verdict": verdict,
                    "subjects": len(rows)},
    }


# ---------------------------------------------------------------- prompt anatomy (probabilities panel)


def _prompt_params(context: dict) -> tuple[Param, ...]:
    subjects = context.get("subjects", {})
    return (
        Param("subject", "Subject", "choice", "college_medicine",
              choices=tuple((name, info["title"]) for name, info in sorted(subjects.items()))),
        Param("shots", "Worked examples (shots)", "int", 1, 0, 5, 1),
        Param("q", "Test question number", "int", 1, 1, 1534, 1),
    )


def _prompt_view(state: dict, context: dict) -> dict:
    """The letter-probability panel of Figure 1; the prompt text itself is data (see the server)."""
    messages = []
    size = context.get("subjects", {}).get(state["subject"], {}).get("test")
    if size is not None and state["q"] > size:
        messages.append(f"{state['subject'].replace('_', ' ')} has {size} test questions; showing number {size}.")
        state["q"] = size
    probs = paper_figures()["examples"]["letter_probs"]
    choice = scoring.predict(probs)
    x = Linear((0, 1), (40, 280))
    marks = []
    for i, (letter, p) in enumerate(probs.items()):
        top = 10 + i * 28
        marks.append(label(28, top + 16, letter, "fig-tick", "end"))
        marks.append(rect(x(0), x(p), top, top + 20, "fig-bar-prob" + (" chosen" if letter == choice else ""),
                          f"P({letter}) = {p:.2f}"))
        marks.append(label(x(p) + 6, top + 15, f"{p:.2f}", "fig-tick", "start"))
    return {
        "summary": [f"Illustrative letter probabilities: " + ", ".join(f"{k} {v:.2f}" for k, v in probs.items())
                    + f". The highest is {choice}, so the prediction is {choice}."],
        "messages": messages,
        "figure": figure(330, 124, "Illustrative probabilities of the four answer letters", marks),
        "numbers": {"prediction": choice, "probs": probs},
    }


# ---------------------------------------------------------------- registry

WIDGETS = {
    "chance-explorer": (_chance_params, _chance_view),
    "calibration-bars": (_calibration_params, _calibration_view),
    "scaling-plot": (_scaling_params, _scaling_view),
    "group-bars": (_group_params, _group_view),
    "subject-bars": (_subject_params, _subject_view),
    "prompt-anatomy": (_prompt_params, _prompt_view),
    "release-gate": (_gate_params, _gate_view),
}


def widget_params(widget: str, context: dict | None = None) -> list[dict]:
    """The settings of ``widget`` as plain data (for building its form)."""
    if widget not in WIDGETS:
        raise ValueError(f"unknown widget {widget!r}; use one of {', '.join(WIDGETS)}")
    return [p.as_dict() for p in WIDGETS[widget][0](context or {})]


def _checked_context(context: object) -> dict:
    """Check the data the server hands over (subject and group sizes, loaded results).

    It comes back from the browser on every call, so it is checked like any other input.
    """
    if context is None:
        return {}
    context = _checks.mapping("context", context, minimum=0)
    for key in ("subject_sizes", "group_sizes"):
        if key in context:
            sizes = _checks.mapping(f"context.{key}", context[key])
            for name, size in sizes.items():
                _checks.whole(f"context.{key}[{name!r}]", size)
            if sum(sizes.values()) > MAX_QUESTIONS:
                raise ValueError(f"context.{key} adds up to more than {MAX_QUESTIONS:,} questions")
    if "group_sizes" in context and set(context["group_sizes"]) != set(_GROUP_NAMES):
        raise ValueError(f"context.group_sizes must name exactly {', '.join(_GROUP_NAMES)}")
    if "subjects" in context:
        for name, info in _checks.mapping("context.subjects", context["subjects"], minimum=0).items():
            info = _checks.mapping(f"context.subjects[{name!r}]", info)
            _checks.text(f"context.subjects[{name!r}]['title']", info.get("title"))
            _checks.whole(f"context.subjects[{name!r}]['test']", info.get("test"))
    if context.get("results") is not None:
        results = _checks.mapping("context.results", context["results"])
        subjects = _checks.labels("context.results.subjects", results.get("subjects"), minimum=2)
        if len(subjects) > MAX_QUESTIONS:
            raise ValueError(f"context.results may hold at most {MAX_QUESTIONS:,} questions")
        _checks.same_length(
            subjects=subjects,
            baseline=_checks.scores("context.results.baseline", results.get("baseline"), minimum=2),
            candidate=_checks.scores("context.results.candidate", results.get("candidate"), minimum=2),
        )
    return context


_NEEDS = {
    "group-bars": ("group_sizes",),
    "subject-bars": ("subject_sizes",), "release-gate": ("subject_sizes",),
}


def widget_view(widget: str, state: dict | None = None, context: dict | None = None) -> dict:
    """Everything one widget shows for one state: {"widget", "state", "query", "messages",
    "summary", "figure", "numbers"}. Bad settings never raise; they come back as messages."""
    if widget not in WIDGETS:
        raise ValueError(f"unknown widget {widget!r}; use one of {', '.join(WIDGETS)}")
    context = _checked_context(context)
    missing = [key for key in _NEEDS.get(widget, ()) if key not in context]
    if missing:
        raise ValueError(f"{widget} needs context.{missing[0]} (the server provides it)")
    if widget == "subject-bars":
        for row in paper_figures()["subjects"]["rows"]:
            if row["subject"] not in context["subject_sizes"]:
                raise ValueError(f"context.subject_sizes needs {row['subject']!r}")
    if state is not None:
        _checks.mapping("state", state, minimum=0)
    params_of, view_of = WIDGETS[widget]
    params = params_of(context)
    clean, messages = parse_state(params, {k: v for k, v in (state or {}).items() if isinstance(v, (str, int, float))})
    view = view_of(clean, context)
    return {
        "widget": widget,
        "state": clean,
        "query": state_query(params, clean),
        "messages": messages + view.pop("messages", []),
        **view,
    }
