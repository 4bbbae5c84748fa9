"""Calibration: does a model's confidence match how often it is right?

A model's confidence on a question is the probability it gave the letter it chose. ``correct``
holds 1 for a right answer and 0 for a wrong one (true/false also accepted).
"""
from __future__ import annotations

import math

from . import checks

BINNINGS = ("equal_count", "fixed_width")


def average_confidence(confidences: list[float]) -> float:
    """The mean of the confidences: what the model claims its accuracy is."""
    confidences = checks.probabilities("confidences", confidences)
    return math.fsum(confidences) / len(confidences)


def calibration_gap(confidences: list[float], correct: list[float]) -> float:
    """|average confidence − accuracy|: how far the claimed accuracy is from the delivered one.

    Ten answers with confidences summing to 6.5 and five right: |0.65 − 0.5| = 0.15.
    """
    confidences = checks.probabilities("confidences", confidences)
    correct = checks.scores("correct", correct)
    n = checks.same_length(confidences=confidences, correct=correct)
    return abs(math.fsum(confidences) / n - sum(correct) / n)


def calibration_groups(confidences: list[float], bins: int = 10, binning: str = "equal_count") -> list[list[int]]:
    """Which answers fall in each confidence group: one list of answer indices per group, from
    least to most confident, groups no answer falls into left out (see calibration_bins, whose
    groups these are; a figure that lets a reader move a group's answers needs to know them).
    An equal-count group lists its answers from least to most confident, a fixed-width one in the
    order they were given."""
    confidences = checks.probabilities("confidences", confidences)
    order, ranked = _ranked(confidences)
    runs = _runs(ranked, checks.whole("bins", bins), checks.choice("binning", binning, BINNINGS))
    return [order[a:b] if binning == "equal_count" else sorted(order[a:b]) for a, b in runs]


def _ranked(confidences: list[float]) -> tuple[list[int], list[float]]:
    """The answers' indices from least to most confident (ties in the order given), and their confidences."""
    order = sorted(range(len(confidences)), key=confidences.__getitem__)
    return order, [confidences[i] for i in order]


def _runs(ranked: list[float], bins: int, binning: str) -> list[tuple[int, int]]:
    """Each confidence group as a run [start, end) of the answers sorted by confidence (``ranked``),
    from least to most confident, empty groups left out. Every group is such a run: an equal-count
    group by its definition, a fixed-width one because a confidence's bin number never falls as the
    confidence rises (multiplying by ``bins`` keeps the order), so a group starts where the bin
    number changes. The work grows with the answers, never with ``bins`` (any whole number up to
    checks.LARGEST_WHOLE is allowed, and most of a fine grid's groups are empty)."""
    n = len(ranked)
    if binning == "equal_count":
        if bins > n:
            raise ValueError(f"bins must be at most the number of answers ({n}) for equal-count binning, got {bins}")
        size = n // bins
        starts = [j * size for j in range(bins)]
    else:  # group j holds [j/bins, (j+1)/bins); 1.0 (bin number ``bins``) joins the last group
        number = [min(int(c * bins), bins - 1) for c in ranked]
        starts = [i for i in range(n) if i == 0 or number[i] != number[i - 1]]
    return [(a, b) for a, b in zip(starts, starts[1:] + [n], strict=True) if b > a]


def _ranked_answers(confidences: list[float], correct: list[float]) -> tuple[list[float], list[float]]:
    """The answers checked, then sorted by confidence: (their confidences, their scores), in that order."""
    confidences = checks.probabilities("confidences", confidences)
    correct = checks.scores("correct", correct)
    checks.same_length(confidences=confidences, correct=correct)
    order, ranked = _ranked(confidences)
    return ranked, [correct[i] for i in order]


def _run_means(ranked: list[float], right: list[float], runs: list[tuple[int, int]]) -> list[dict]:
    """Each group's size and means; ``right`` in the same order as ``ranked``. math.fsum rounds the
    exact sum once, so a group's means do not depend on the order its answers are added in."""
    return [{"n": b - a, "confidence": math.fsum(ranked[a:b]) / (b - a), "accuracy": math.fsum(right[a:b]) / (b - a)}
            for a, b in runs]


def calibration_bins(
    confidences: list[float], correct: list[float], bins: int = 10, binning: str = "equal_count"
) -> list[dict]:
    """Sort answers into confidence groups; for each: {"n", "confidence", "accuracy"} (group means).

    binning="equal_count" (Hendrycks, Mazeika & Dietterich 2019): sort answers by confidence and
    cut them into ``bins`` runs of N // bins answers, the last run taking the remainder; every group
    then has answers, so ``bins`` may not exceed N. binning="fixed_width": group j holds confidences
    in [j/bins, (j+1)/bins), the last also holding 1.0; groups no answer falls into are left out.
    Groups come back from least to most confident.
    """
    ranked, right = _ranked_answers(confidences, correct)
    bins, binning = checks.whole("bins", bins), checks.choice("binning", binning, BINNINGS)
    return _run_means(ranked, right, _runs(ranked, bins, binning))


def calibration_bins_for_each_count(
    confidences: list[float], correct: list[float], most: int, binning: str = "equal_count"
) -> list[list[dict]]:
    """calibration_bins for 1, 2, …, ``most`` groups, the same numbers, with the answers checked and
    sorted once instead of once a count: for a figure that offers every group count (the calibration
    widget's table of a whole published run, 14,042 answers, took a second that way)."""
    ranked, right = _ranked_answers(confidences, correct)
    most, binning = checks.whole("most", most), checks.choice("binning", binning, BINNINGS)
    return [_run_means(ranked, right, _runs(ranked, bins, binning)) for bins in range(1, most + 1)]


def rms_calibration_error(
    confidences: list[float], correct: list[float], bins: int = 10, binning: str = "equal_count"
) -> float:
    """The root-mean-square calibration error (Hendrycks, Mazeika & Dietterich 2019, appendix).

    In words: "sort the answers into confidence groups, take each group's gap between accuracy and
    confidence, square it, average the squares with each group weighted by its size, and take the
    square root": √(Σⱼ |Bⱼ|/N (acc(Bⱼ) − conf(Bⱼ))²). Groups are formed as in calibration_bins.
    Squaring stops over- and under-confident groups from cancelling.
    """
    return rms_of_groups(calibration_bins(confidences, correct, bins, binning))


def rms_of_groups(groups: list[dict]) -> float:
    """rms_calibration_error from the groups calibration_bins returned, for a caller that shows both
    (the same number, without checking, sorting and grouping the answers a second time)."""
    total = sum(g["n"] for g in groups)
    return math.sqrt(math.fsum(g["n"] / total * (g["accuracy"] - g["confidence"]) ** 2 for g in groups))


def _unit_scaled(values: list[float]) -> list[float]:
    """``values`` divided by the largest of their sizes (not all zero), so the largest is ±1."""
    largest = max(map(abs, values))
    return [v / largest for v in values]


def confidence_accuracy_correlation(confidences: list[float], accuracies: list[float]) -> float:
    """Pearson's correlation, across subjects, between average confidence and accuracy.

    1 means the subjects the model is surer about are exactly the ones it does better on; the paper
    reports 0.63 zero-shot and 0.81 few-shot for GPT-3. Needs at least two subjects, and neither list
    may be constant.
    """
    confidences = checks.probabilities("confidences", confidences, minimum=2)
    accuracies = checks.probabilities("accuracies", accuracies, minimum=2)
    n = checks.same_length(confidences=confidences, accuracies=accuracies)
    for name, values in (("confidences", confidences), ("accuracies", accuracies)):
        if min(values) == max(values):
            raise ValueError(f"{name} are all equal, so a correlation is undefined")
    mean_c, mean_a = math.fsum(confidences) / n, math.fsum(accuracies) / n
    # Deviations scaled to at most 1 (r does not change): squares of deviations near 1e-188 would be
    # 0.0, and r a division by zero.
    dev_c = _unit_scaled([c - mean_c for c in confidences])
    dev_a = _unit_scaled([a - mean_a for a in accuracies])
    spread_c = math.sqrt(math.fsum(d * d for d in dev_c))
    spread_a = math.sqrt(math.fsum(d * d for d in dev_a))
    r = math.fsum(x * y for x, y in zip(dev_c, dev_a, strict=False)) / (spread_c * spread_a)
    return max(-1.0, min(1.0, r))
