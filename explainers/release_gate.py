"""The release gate: is a candidate model's score really different from the production model's?

Both models answer the same questions, so compare them question by question (paired), and since
questions come in subjects whose answers move together, let each subject be one cluster when
estimating the error bar. ``candidate`` and ``baseline`` hold per-question scores (1 right,
0 wrong) over the same questions in the same order; ``clusters`` names each question's subject.
"""
from __future__ import annotations

import math

from . import checks

GATE_SE_MULTIPLE = 2.0


def _differences(candidate: list[float], baseline: list[float]) -> list[float]:
    candidate = checks.scores("candidate", candidate, minimum=2)
    baseline = checks.scores("baseline", baseline, minimum=2)
    checks.same_length(candidate=candidate, baseline=baseline)
    return [c - b for c, b in zip(candidate, baseline, strict=False)]


def _clustered_se(diffs: list[float], clusters: list[str]) -> float:
    n = len(diffs)
    delta = math.fsum(diffs) / n
    residual_sums: dict[str, float] = {}
    for d, cluster in zip(diffs, clusters, strict=False):
        residual_sums[cluster] = residual_sums.get(cluster, 0.0) + (d - delta)
    return math.sqrt(math.fsum(s * s for s in residual_sums.values())) / n


def _checked_clusters(clusters: list[str], n: int) -> list[str]:
    clusters = checks.labels("clusters", clusters)
    if len(clusters) != n:
        raise ValueError(f"clusters must have one subject per question ({n}), got {len(clusters)}")
    if len(set(clusters)) < 2:
        raise ValueError("clusters must name at least 2 different subjects")
    return clusters


def paired_delta(candidate: list[float], baseline: list[float]) -> float:
    """The mean per-question difference, candidate minus baseline: (1/n) Σ (cᵢ − bᵢ).

    It equals the difference of the two accuracies; what pairing changes is the error bar.
    """
    diffs = _differences(candidate, baseline)
    return math.fsum(diffs) / len(diffs)


def paired_standard_error(candidate: list[float], baseline: list[float]) -> float:
    """The standard error of the paired delta, treating questions as independent.

    In words: "the spread of the per-question differences (sample standard deviation) divided by
    the square root of the number of questions": sd(d) / √n.
    """
    diffs = _differences(candidate, baseline)
    n = len(diffs)
    delta = math.fsum(diffs) / n
    return math.sqrt(math.fsum((d - delta) ** 2 for d in diffs) / (n - 1)) / math.sqrt(n)


def independent_standard_error(candidate: list[float], baseline: list[float]) -> float:
    """The naive standard error of the delta: the two accuracies treated as independent samples.

    In words: "add the two accuracies' squared binomial standard errors and take the square root":
    √(p_c(1 − p_c)/n + p_b(1 − p_b)/n). It ignores that both models answered the same questions,
    so it is what a side-by-side comparison of two leaderboard numbers implicitly uses.
    """
    diffs = _differences(candidate, baseline)
    n = len(diffs)
    p_c, p_b = math.fsum(candidate) / n, math.fsum(baseline) / n
    return math.sqrt(p_c * (1 - p_c) / n + p_b * (1 - p_b) / n)


def clustered_standard_error(candidate: list[float], baseline: list[float], clusters: list[str]) -> float:
    """The standard error of the paired delta with questions clustered by subject.

    In words: "within each subject add up how far its questions' differences sit from the overall
    delta; square those subject totals, add them, take the square root and divide by the number of
    questions": √(Σ_s (Σ_{i∈s} (dᵢ − d̄))²) / n. Subjects whose questions move together widen it.
    """
    diffs = _differences(candidate, baseline)
    return _clustered_se(diffs, _checked_clusters(clusters, len(diffs)))


def subject_deltas(candidate: list[float], baseline: list[float], clusters: list[str]) -> list[dict]:
    """Per-subject paired deltas for the dashboard, smallest first: [{"subject", "n", "delta"}]."""
    diffs = _differences(candidate, baseline)
    clusters = checks.labels("clusters", clusters)
    if len(clusters) != len(diffs):
        raise ValueError(f"clusters must have one subject per question ({len(diffs)}), got {len(clusters)}")
    sums: dict[str, list[float]] = {}
    for d, cluster in zip(diffs, clusters, strict=False):
        entry = sums.setdefault(cluster, [0, 0.0])  # questions, sum of differences
        entry[0] += 1
        entry[1] += d
    rows = [{"subject": s, "n": k, "delta": total / k} for s, (k, total) in sums.items()]
    return sorted(rows, key=lambda row: (row["delta"], row["subject"]))


def gate_verdict(
    candidate: list[float], baseline: list[float], clusters: list[str], multiple: float = GATE_SE_MULTIPLE
) -> dict:
    """Decide whether a score change needs a human: {"delta", "paired_se", "clustered_se", "verdict"}.

    verdict is "investigate" when |delta| exceeds ``multiple`` (default 2) clustered standard errors,
    otherwise "ship": the change is within noise.
    """
    diffs = _differences(candidate, baseline)
    clusters = _checked_clusters(clusters, len(diffs))
    multiple = checks.number("multiple", multiple)
    if multiple <= 0:
        raise ValueError(f"multiple must be positive, got {multiple}")
    delta = math.fsum(diffs) / len(diffs)
    clustered = _clustered_se(diffs, clusters)
    return {
        "delta": delta,
        "paired_se": paired_standard_error(candidate, baseline),
        "clustered_se": clustered,
        "verdict": "investigate" if abs(delta) > multiple * clustered else "ship",
    }
