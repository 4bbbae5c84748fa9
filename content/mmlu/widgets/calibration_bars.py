"""Calibration bars: what a model claimed (confidence) against how often it was right, per group."""
from __future__ import annotations

import math

from benchmarks.live_runs import MAX_BINS, live_calibration, model_name, run_choices, run_of
from benchmarks.mmlu.figures import paper_figures
from explainers import calibration
from explainers.calibration import calibration_groups
from widgetkit import Param, Widget
from widgetkit.layout import GAP, Box
from widgetkit.scene import Y_AXIS_WIDTH, Linear, Placer, caption, figure, handle, legend, percent_axis_y, rect
from widgetkit.words import count, plural, points

EXAMPLE = "example"


def params(context: dict) -> tuple[Param, ...]:
    example = paper_figures()["examples"]["calibration"]
    live = run_choices(context.get("live_calibration"))
    source = (Param("source", "Whose answers", "choice", EXAMPLE,
                    choices=((EXAMPLE, "the example (typed below)"), *live)),) if live else ()
    return source + (
        Param("conf", "Confidence of each answer", "numbers", tuple(example["confidences"]), 0.0, 1.0, 0.01),
        Param("correct", "Whether each answer was right", "flags", tuple(example["correct"])),
        Param("bins", "Number of confidence groups", "int", 2, 1, MAX_BINS, 1),
        Param("binning", "How groups are formed", "choice", "equal_count",
              choices=(("equal_count", "equal numbers of answers"), ("fixed_width", "equal confidence ranges"))),
    )


def normalise(state: dict, context: dict) -> tuple[dict, list[str]]:
    """Pair confidences with right/wrong marks, and fit the number of groups to the answers."""
    if state.get("source", EXAMPLE) != EXAMPLE:
        return state, []  # a published run has thousands of answers: every group count fits
    conf, correct, bins = state["conf"], state["correct"], state["bins"]
    messages = []
    if len(conf) != len(correct):
        used = min(len(conf), len(correct))
        messages.append(f"There are {len(conf)} confidences and {len(correct)} right/wrong marks; "
                        f"the first {used} pairs are used.")
        conf, correct = conf[:used], correct[:used]
    if state["binning"] == "equal_count" and bins > len(conf):
        messages.append(f"At most {len(conf)} groups fit {len(conf)} answers; using {len(conf)}.")
        bins = len(conf)
    return {**state, "conf": conf, "correct": correct, "bins": bins}, messages


def _example(state: dict) -> dict:
    """The figures for the answers typed into the settings, computed here."""
    conf, correct, bins, binning = state["conf"], state["correct"], state["bins"], state["binning"]
    groups = calibration.calibration_bins(conf, correct, bins, binning)
    return {
        "answers": f"{len(conf)} answers",
        "groups": groups,
        "average": calibration.average_confidence(conf),
        "accuracy": math.fsum(correct) / len(correct),
        "gap": calibration.calibration_gap(conf, correct),
        "rms": calibration.rms_of_groups(groups),
        "members": calibration_groups(conf, bins, binning),
    }


def _published(state: dict, runs: dict) -> dict:
    """The figures for a published run, computed from its rows by the same functions on the server."""
    run = run_of(runs, state["source"])
    entry = run["table"][state["binning"]][state["bins"] - 1]
    return {
        "answers": f"{model_name(runs['model'])}, {run['key']}, on all {count(run['questions'])} test questions "
                   "(the typed answers are not used)",
        "groups": entry["groups"], "average": run["average_confidence"],
        "accuracy": run["correct"] / run["questions"], "gap": run["gap"], "rms": entry["rms"],
    }


def _summary(shown: dict) -> list[str]:
    """The sentences: the answers' average confidence against their accuracy, then each group's."""
    groups, average, acc, gap, rms = (shown[k] for k in ("groups", "average", "accuracy", "gap", "rms"))
    direction = "more" if average > acc else "less"
    return [
        f"{shown['answers']}: average confidence {average:.2f}, accuracy {acc:.2f}; "
        f"the model claims {points(abs(average - acc))} {direction} than it delivers (gap {gap:.2f}).",
        f"RMS calibration error over {plural(len(groups), 'confidence group')}: {rms:.3f}.",
    ] + [
        f"Group {i + 1} ({plural(g['n'], 'answer')}): claimed {g['confidence']:.2f}, right {g['accuracy']:.2f}, "
        f"gap {g['accuracy'] - g['confidence']:+.2f}."
        for i, g in enumerate(groups)
    ]


def view(state: dict, context: dict) -> dict:
    source = state.get("source", EXAMPLE)
    shown = _example(state) if source == EXAMPLE else _published(state, context["live_calibration"])
    groups, average, acc, gap, rms = (shown[k] for k in ("groups", "average", "accuracy", "gap", "rms"))
    summary = _summary(shown)
    width = state["width"]
    y = Linear((0, 1), (220, 20))
    left, right = Y_AXIS_WIDTH, width - GAP
    slot = (right - left) / len(groups)
    bar = min(56, slot / 3)
    marks = percent_axis_y(y, left, right)
    names = Placer(width)  # a group's name under its bars, or a line lower where its neighbour's is
    conf_setting = {p.name: p for p in params(context)}["conf"]
    for i, g in enumerate(groups):
        centre = left + slot * (i + 0.5)
        claimed_x, actual_x = centre - bar - 2, centre + 2
        claimed = rect(claimed_x, claimed_x + bar, y(0), y(g["confidence"]), "fig-bar-claimed",
                       f"Group {i + 1}: claimed confidence {g['confidence']:.2f}")
        if "members" in shown:  # typed answers: the claimed bar's top drags the group's confidences
            top = y(g["confidence"])
            claimed = handle(conf_setting, g["confidence"],
                             f"claimed {g['confidence']:.2f}, right {g['accuracy']:.2f}",
                             [(y(0), 0.0), (y(1), 1.0)], Box(claimed_x, top - 6, claimed_x + bar, top + 6),
                             [claimed], at=(claimed_x + bar / 2, top), axis="y",
                             hint=None if i else "drag a bar's top: its confidence",
                             key=f"group-{i + 1}", items=shown["members"][i],
                             label=f"Group {i + 1}: confidence of its {plural(g['n'], 'answer')}")
        marks += [
            claimed,
            rect(actual_x, actual_x + bar, y(0), y(g["accuracy"]), "fig-bar-actual",
                 f"Group {i + 1}: accuracy {g['accuracy']:.2f}"),
        ]
        if abs(g["confidence"] - g["accuracy"]) > 1e-9:
            marks.append(rect(actual_x, actual_x + bar, y(g["accuracy"]), y(g["confidence"]), "fig-gap",
                              f"Group {i + 1}: gap {g['accuracy'] - g['confidence']:+.2f}"))
        marks.append(names.near(f"{g['confidence']:.2f} ({count(g['n'])})", "fig-group-label", centre,
                                [240 + 16 * row for row in range(len(groups))]))
    words, bottom = caption((left + right) / 2, names.bottom + 6, right - left,
                            "average claimed confidence of each group (answers in it)")
    marks += words
    keys, bottom = legend([("box", "fig-bar-claimed", "claimed confidence"), ("box", "fig-bar-actual", "accuracy"),
                           ("box", "fig-gap", "gap between them")], left, bottom + 4, right - left)
    marks += keys
    height = round(bottom + GAP)
    return {
        "summary": summary,
        "figure": figure(width, height, f"Claimed confidence and accuracy in {len(groups)} confidence groups", marks,
                         role="group" if "members" in shown else "img"),
        "numbers": {"average_confidence": average, "accuracy": acc, "gap": gap, "rms": rms, "groups": groups},
    }


WIDGET = Widget(
    name="calibration-bars",
    title="Calibration bars: claimed confidence against accuracy",
    blurb="Each pair of bars is one confidence group: what the model claimed, and how often it was right.",
    height=980, params=params, normalise=normalise, view=view, script=True, style=True,
    accepts={"live_calibration": live_calibration},
)
