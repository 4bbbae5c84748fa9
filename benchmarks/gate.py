"""The release gate applied to two runs: the numbers, the verdict, and which of four shapes the night has.

``compare`` takes paired results (see ``runs.pair_runs``) and returns everything the command line
and the widget show. The statistics are ``explainers.release_gate``'s; this module only decides
the shape, with these rules (the lesson's "Four shapes" section explains them):

- **noise**: the delta is within the gate's band (``explainers.gate_verdict``: Student's t with
  G − 1 degrees of freedom, at the level of 2 standard errors or the multiple given, times the
  larger of the clustered error (CR1) and the paired one; see that module for the few-subjects rule);
- **too little data** ("undecided"): within a band wider than ±5 points (the verdict "too little
  data"): no shape can be told from noise;
- **knowledge regression** (or gain): past the gate, and one subject group moved on its own:
  that group's delta is past its own gate's band, in the overall direction, and differs from the
  other groups' pooled delta by more than chance (Student's t times the error of the difference),
  while the others' delta is within theirs
  (needs ``groups``, subject → group);
- **format regression**: given a generative pair as well as the letter pair, the generative delta
  is a drop past its gate while letter scoring held: its delta is within its own band (one of ±5
  points or less: "ship"), or is a rise (no sign of lost knowledge), or a drop of at most
  a quarter of the generative drop (``FORMAT_SHARE``: most of the loss is in writing the answer, not
  in knowing it; the report then says the letter pair moved too);
- **contamination signature**: given a held-out pair as well, the public delta is a rise past its
  gate while the held-out delta is within its own.

Past the gate with none of those: "unexplained", which still needs a person. A shape is a
hypothesis for a person to check, not a finding: the rules look at a few numbers only.
"""
from __future__ import annotations

import math

from explainers import release_gate
from widgetkit.words import few_subjects_words, gate_error_words

SHAPES = {
    "noise": "Noise: the change is within the gate's band ({band}). Ship it.",
    "undecided": "Too little data: the gate's band ({band}) is wider than ±5 points, so no shape can be told "
                 "from noise. Score more questions before deciding.",
    "knowledge": "Knowledge regression: one subject group moved together while the others held.",
    "format": "Format regression: generated answers dropped while letter scoring held. Check the chat "
              "template and stop sequences before calling it lost knowledge.",
    "contamination": "Contamination signature: the public set rose with no matching move on the held-out set.",
    "unexplained": "Past the gate, but none of the four shapes fits: a person should look.",
}
# A format regression may come with a smaller letter move: up to this share of the generative drop.
FORMAT_SHARE = 0.25


def _pair_numbers(pair: dict, multiple: float = release_gate.GATE_SE_MULTIPLE) -> dict:
    candidate, baseline, subjects = pair["candidate"], pair["baseline"], pair["subjects"]
    gate = release_gate.gate_verdict(candidate, baseline, subjects, multiple)
    n = len(candidate)
    return {
        "n": n,
        "subjects_count": len(set(subjects)),
        "production_accuracy": sum(baseline) / n,
        "candidate_accuracy": sum(candidate) / n,
        "delta": gate["delta"],
        "naive_se": release_gate.independent_standard_error(candidate, baseline),
        "paired_se": gate["paired_se"],
        "clustered_se": gate["clustered_se"],
        "clustered_se_cr1": gate["clustered_se_cr1"],
        "subjects": gate["subjects"],
        "df": gate["df"],
        "few_subjects": gate["few_subjects"],
        "gate_se": gate["gate_se"],
        "gate_se_basis": gate["gate_se_basis"],
        "critical": gate["critical"],
        "multiple": multiple,
        "band": gate["band"],
        "p_value": gate["p_value"],
        "verdict": gate["verdict"],
        "questions_needed": gate["questions_needed"],
    }


def _moves(numbers: dict) -> bool:
    return numbers["verdict"] == "investigate"


def _apart(inside: dict, rest: dict) -> bool:
    """Whether a group's delta differs from the rest's by more than chance: the two are disjoint
    subjects, so the error of their difference is √(SE_group² + SE_rest²), gated at the group's own
    Student's t. A uniform drop, where each subject's change only scatters, is not apart."""
    return abs(inside["delta"] - rest["delta"]) > inside["critical"] * math.hypot(inside["gate_se"], rest["gate_se"])


def group_moves(pair: dict, groups: dict[str, str], multiple: float = release_gate.GATE_SE_MULTIPLE) -> list[dict]:
    """Each group's delta against the rest: [{"group", "n", "subjects", "delta", "clustered_se", "band",
    "few_subjects", "moved", "rest_moved", "apart"}]; ``apart``: the group's delta differs from the
    rest's by more than chance (see _apart).

    A group (or the rest) with fewer than two subjects has no clustered error; it is left out. Each
    group is gated on its own, so a group of fewer than 20 subjects gets the few-subjects rule.
    """
    return [{"group": found["group"], **{key: found["inside"][key] for key in (
                "n", "subjects", "delta", "clustered_se", "band", "few_subjects")},
             "moved": _moves(found["inside"]), "rest_moved": _moves(found["rest"]),
             "apart": _apart(found["inside"], found["rest"])}
            for found in release_gate.group_verdicts(pair["candidate"], pair["baseline"], pair["subjects"],
                                                     groups, multiple)]


def compare(pair: dict, groups: dict[str, str] | None = None, generative: dict | None = None,
            holdout: dict | None = None, multiple: float = release_gate.GATE_SE_MULTIPLE) -> dict:
    """The gate's report for one production/candidate pair (and the optional second pairs).

    ``multiple`` is the gate's width in standard errors on the normal curve (2 by default); the band
    widens it by Student's t (see ``explainers.gate_verdict``). ``few_subjects`` in the report
    (and in each pair's numbers) says the subject-clustered error is unreliable with this few subjects.
    """
    main = _pair_numbers(pair, multiple)
    report = {
        **main,
        "subject_rows": release_gate.subject_deltas(pair["candidate"], pair["baseline"], pair["subjects"]),
        "dropped": pair.get("dropped", 0),
        "groups": group_moves(pair, groups, multiple) if groups else [],
        "generative": _pair_numbers(generative, multiple) if generative else None,
        "holdout": _pair_numbers(holdout, multiple) if holdout else None,
    }
    report["shape"] = shape_of(report)
    return report


def letter_held(report: dict) -> bool:
    """Whether letter scoring held against the generative pair's drop (the format rule above)."""
    generative = report["generative"]
    return report["verdict"] == "ship" or report["delta"] >= -FORMAT_SHARE * abs(generative["delta"])


def shape_of(report: dict) -> str:
    """Which of the four shapes (or "unexplained") the report looks like; see the module's rules."""
    generative, holdout = report["generative"], report["holdout"]
    if generative and _moves(generative) and generative["delta"] < 0 and letter_held(report):
        return "format"
    if not _moves(report):
        return "noise" if report["verdict"] == "ship" else "undecided"
    if holdout and report["delta"] > 0 and holdout["verdict"] == "ship":
        return "contamination"
    if _lone_groups(report):
        return "knowledge"
    return "unexplained"


def _lone_groups(report: dict) -> list[dict]:
    """The groups that moved on their own: past their band, apart from the rest, the rest within theirs."""
    direction = 1 if report["delta"] > 0 else -1
    return [g for g in report["groups"]
            if g["moved"] and g["apart"] and not g["rest_moved"] and g["delta"] * direction > 0]


def lone_group(report: dict) -> dict | None:
    """The group that moved on its own, when the shape is a knowledge regression."""
    if report["shape"] != "knowledge":
        return None
    return max(_lone_groups(report), key=lambda g: abs(g["delta"]))


def undecided_words(numbers: dict) -> str:
    """Why a pair's verdict is "too little data", and how many questions would decide it."""
    return (f"Too little data to decide: a band of ±{numbers['band'] * 100:.2f} points is wider than "
            f"±{release_gate.DECISIVE_BAND * 100:g}, so a drop of several points would pass as noise. At today's "
            f"spread, a band of ±{release_gate.TARGET_BAND * 100:g} points would take about "
            f"{numbers['questions_needed']:,} questions in these {numbers['subjects']} subjects (spread over more "
            f"subjects, the band narrows faster still).")


def error_lines(report: dict) -> list[str]:
    """The report's sentences on its standard errors and the statistics its band rests on (CR1,
    Student's t): the engineers' part, which the widget puts behind a fold."""
    size = lambda x: f"{x * 100:.2f}"  # noqa: E731
    return [
        f"Standard error of the delta: naive (independent) {size(report['naive_se'])}, "
        f"paired {size(report['paired_se'])}, clustered by subject {size(report['clustered_se'])} "
        f"({size(report['clustered_se_cr1'])} with the small-sample factor, CR1) points.",
        *gate_error_words(report, report["multiple"]),
    ]


def report_lines(report: dict, headline_given: bool = False) -> list[str]:
    """The report as plain sentences, for the command line and the widget's summary. With
    ``headline_given`` (the widget, whose headline already names the verdict and the shape) the
    verdict's line gives only its rule, and the shape's only the group that moved, so each is said once."""
    pts = lambda x: f"{x * 100:+.2f}"  # noqa: E731  (points, signed)
    size = lambda x: f"{x * 100:.2f}"  # noqa: E731
    verdict = report["verdict"]
    lines = [
        f"{report['n']:,} paired questions in {report['subjects_count']} subjects"
        + (f" ({report['dropped']:,} in only one run, left out)" if report["dropped"] else "") + ".",
        f"Production {report['production_accuracy'] * 100:.2f}%, candidate {report['candidate_accuracy'] * 100:.2f}%: "
        f"paired delta {pts(report['delta'])} points.",
        *few_subjects_words(report),
        *error_lines(report),
        ("The gate's rule: " if headline_given else f"Verdict: {verdict} (")
        + f"|Δ| {'>' if verdict == 'investigate' else '≤'} {report['critical']:.2f} × SE "
        f"= {size(report['band'])} points" + ("." if headline_given else ")."),
    ]
    if verdict == "too little data":
        lines.append(undecided_words(report))

    def few(numbers: dict) -> str:
        return (f" Only {numbers['subjects']} subjects: an error clustered by subject is unreliable with so few, so"
                f" the band uses the larger of it and the paired error, and is wider." if numbers["few_subjects"] else "")

    if report["generative"]:
        g = report["generative"]
        lines.append(f"Generative pair: delta {pts(g['delta'])} points, band ±{size(g['band'])}: {g['verdict']}."
                     + few(g))
        if report["shape"] == "format" and _moves(report) and report["delta"] < 0:
            lines.append(f"Letter scoring moved too ({pts(report['delta'])} points, past its band), but by at most "
                         f"a quarter of the written answers' drop: most of the loss is in the answer's format.")
        elif report["shape"] == "format" and report["delta"] > 0:
            lines.append(f"Letter scoring did not drop ({pts(report['delta'])} points): no sign of lost knowledge there.")
    if report["holdout"]:
        h = report["holdout"]
        lines.append(f"Held-out pair: delta {pts(h['delta'])} points, band ±{size(h['band'])}: {h['verdict']}."
                     + few(h))
    group = lone_group(report)
    if headline_given:
        if group:
            lines.append(f"The group that moved: {group['group']}, {pts(group['delta'])} points over "
                         f"{group['n']:,} questions.")
        return lines
    shape = SHAPES[report["shape"]].replace(
        "{band}", f"±{size(report['band'])} points, {report['critical']:.2f} standard errors")
    if group:
        shape += f" ({group['group']}: {pts(group['delta'])} points over {group['n']:,} questions"
        shape += (f"; its own gate has {group['subjects']} subjects, so it uses the few-subjects rule)"
                  if group["few_subjects"] else ")")
    lines.append(f"Shape: {shape}")
    return lines
