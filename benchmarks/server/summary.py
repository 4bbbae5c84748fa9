"""The summary of a run's rows that ``python -m benchmarks <benchmark> evaluate`` prints (and the
MMLU-Pro page reads): micro and macro accuracy with 95 % intervals, the chance rate, RMS
calibration error, predicted letters, per group; every figure computed by ``explainers``.
"""
from __future__ import annotations

import math

import explainers

CALIBRATION_BINS = 10
NO_LETTER = "none"  # a generative row whose response matches no letter, as the summary counts it


def summarise(rows: list[dict], groups_key: str = "subjects") -> dict:
    """Micro (per question) and macro (per group) accuracy with 95 % intervals, the chance rate,
    RMS calibration error, and each group's accuracy with its Wilson interval.

    The micro interval is the Wilson interval on all questions. The macro score is the plain mean
    of group accuracies; its interval is the mean ± 1.96 × √(Σ SEₛ²) / S, the groups' binomial
    standard errors combined as independent. The chance rate is the mean of 1/K over the
    questions (K options each). Calibration needs every row's ``confidence``; without it, None.
    """
    from benchmarks.runfile import group_of

    predictions = [r["prediction"] if r["prediction"] is not None else NO_LETTER for r in rows]
    keys = [r["key"] for r in rows]
    groups = [group_of(r) for r in rows]
    micro = explainers.accuracy(predictions, keys)
    per_group = explainers.subject_accuracies(predictions, keys, groups)
    for g in per_group.values():
        g["ci95"] = explainers.confidence_interval(g["accuracy"], g["n"], 0.95, "wilson")
    macro = explainers.plain_mean([g["accuracy"] for g in per_group.values()])
    variances = [explainers.standard_error(g["accuracy"], g["n"]) ** 2 for g in per_group.values()]
    macro_se = math.sqrt(sum(variances)) / len(per_group)
    z = explainers.normal_quantile(0.975)
    options = [r["options"] if "options" in r else len(r["probabilities"]) for r in rows]
    letters = sorted(set().union(*(r.get("probabilities") or {} for r in rows)) | set(predictions))
    summary = {
        "questions": len(rows),
        groups_key: per_group,
        "micro": {"accuracy": micro, "ci95": explainers.confidence_interval(micro, len(rows), 0.95, "wilson")},
        "macro": {"accuracy": macro, "ci95": (max(0.0, macro - z * macro_se), min(1.0, macro + z * macro_se))},
        "chance": explainers.plain_mean([1 / k for k in options]),
        "rms_calibration_error": None,
        "average_confidence": None,
        "predicted_letters": {letter: predictions.count(letter) for letter in letters},
    }
    if all(r.get("confidence") is not None for r in rows):
        confidences = [r["confidence"] for r in rows]
        correct = [1 if r["correct"] else 0 for r in rows]
        summary["rms_calibration_error"] = explainers.rms_calibration_error(confidences, correct,
                                                                            min(CALIBRATION_BINS, len(rows)))
        summary["average_confidence"] = explainers.average_confidence(confidences)
    if rows and all("rotations" in r for r in rows):
        summary["rotation"] = explainers.rotation_metrics([[x["answer"] for x in r["rotations"]] for r in rows],
                                                          keys)
    return summary


def report(summary: dict, groups_key: str = "subjects", words: tuple[str, str] = ("subject", "subjects")) -> str:
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    micro, macro, groups = summary["micro"], summary["macro"], summary[groups_key]
    lines = [
        f"Questions: {summary['questions']} in {len(groups)} {words[0] if len(groups) == 1 else words[1]}",
        f"Micro accuracy (each question once): {pct(micro['accuracy'])}  "
        f"95% CI {pct(micro['ci95'][0])} to {pct(micro['ci95'][1])} (Wilson)",
        f"Macro accuracy (each {words[0]} once):{' ' * max(1, 9 - len(words[0]))}{pct(macro['accuracy'])}  "
        f"95% CI {pct(macro['ci95'][0])} to {pct(macro['ci95'][1])}",
        f"Chance for these questions: {pct(summary['chance'])}",
    ]
    if summary["rms_calibration_error"] is not None:
        lines.append(f"RMS calibration error: {pct(summary['rms_calibration_error'])} "
                     f"(average confidence {pct(summary['average_confidence'])})")
    if "rotation" in summary:
        rotation = summary["rotation"]
        lines.append(f"Rotation check ({rotation['rotations']} rotations): the same option in every rotation "
                     f"{pct(rotation['consistent'])}; right in every rotation {pct(rotation['accuracy_all_rotations'])} "
                     f"(as published {pct(rotation['accuracy_first_rotation'])}, mean over rotations "
                     f"{pct(rotation['accuracy_mean'])})")
    lines += ["Predicted letters: " + ", ".join(f"{k} {v}" for k, v in summary["predicted_letters"].items()),
              f"Per {words[0]}:"]
    lines += [f"  {name}: {pct(g['accuracy'])} of {g['n']} ({pct(g['ci95'][0])} to {pct(g['ci95'][1])})"
              for name, g in groups.items()]
    return "\n".join(lines)
