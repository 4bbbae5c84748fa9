"""The release gate: is a candidate model's score really different from the production model's?

Both models answer the same questions, so compare them question by question (paired), and since
questions come in subjects whose answers move together, let each subject be one cluster when
estimating the error bar. ``candidate`` and ``baseline`` hold per-question scores (1 right,
0 wrong) over the same questions in the same order; ``clusters`` names each question's subject.

The clustered error is the sandwich (cluster-robust) estimator of a mean: CR0 is the form the
sources write, CR1 multiplies its variance by the small-sample factor G/(G − 1) for G subjects.
That is exactly what statsmodels' OLS of the deltas on a constant gives with
``cov_type="cluster"`` (``use_correction=False`` for CR0, the default for CR1): its factor
G/(G − 1) · (N − 1)/(N − K) has K = 1 here, so the second part is 1. Tests go with Student's t
with G − 1 degrees of freedom, as statsmodels does with ``use_t=True`` and its default
``df_correction``.

The few-subjects rule: a cluster-robust error is unreliable with few clusters, and can even be
exactly 0 (every subject moved by the same amount). Cameron & Miller, "A Practitioner's Guide to
Cluster-Robust Inference", Journal of Human Resources 50(2), 2015, section VI: "few" clusters
ranges from fewer than about 20 to fewer than about 50 in the balanced case. Below FEW_SUBJECTS
(20) the gate flags the error as unreliable. At any number of subjects the verdict rests on the
larger of the clustered (CR1) and the paired error, never on a clustered error smaller than the
paired one (the guard Angrist & Pischke recommend against the small-sample bias of robust
errors, Mostly Harmless Econometrics, 2009, section 8.1), and on Student's t with G − 1 degrees
of freedom (Cameron & Miller's minimal few-cluster correction).

A gate that cannot tell says so: when the delta is within a band wider than DECISIVE_BAND (±5
points), "ship" would only mean that the runs are too small to see a change of that size, so the
verdict is "too little data" instead, with the number of questions a band of ±TARGET_BAND (2
points) would take.
"""
from __future__ import annotations

import math

from . import checks
from .stats import MAX_DEGREES_OF_FREEDOM, _degrees_of_freedom, _t_beyond, _t_upper_tail

GATE_SE_MULTIPLE = 2.0
# Below this many subjects a subject-clustered error is unreliable (Cameron & Miller 2015, section VI).
FEW_SUBJECTS = 20
CORRECTIONS = ("CR0", "CR1")
MAX_MULTIPLE = 10.0  # standard errors; the normal tail beyond stays a normal float
# Past this half-width (in accuracy, 5 points) a band is too wide for "ship" to mean anything, and the
# number of questions a band of TARGET_BAND (2 points) would take is given.
DECISIVE_BAND = 0.05
TARGET_BAND = 0.02


def _differences(candidate: list[float], baseline: list[float]) -> list[float]:
    candidate = checks.scores("candidate", candidate, minimum=2)
    baseline = checks.scores("baseline", baseline, minimum=2)
    checks.same_length(candidate=candidate, baseline=baseline)
    return [c - b for c, b in zip(candidate, baseline, strict=False)]


def _clustered_se(diffs: list[float], clusters: list[str], correction: str = "CR0") -> float:
    cr0 = _cr0(_subject_sums(diffs, clusters).values(), len(diffs), math.fsum(diffs))
    return _cr1(cr0, len(set(clusters))) if correction == "CR1" else cr0


def _cr1(cr0: float, subjects: int) -> float:
    """CR0 with the small-sample factor √(G/(G − 1)) for G subjects."""
    return cr0 * math.sqrt(subjects / (subjects - 1))


def _subject_sums(diffs: list[float], clusters: list[str]) -> dict[str, tuple[int, float]]:
    """Each subject's number of questions and the sum of their differences (correctly rounded)."""
    by_subject: dict[str, list[float]] = {}
    for d, cluster in zip(diffs, clusters, strict=False):
        by_subject.setdefault(cluster, []).append(d)
    return {cluster: (len(ds), math.fsum(ds)) for cluster, ds in by_subject.items()}


def _cr0(sums, n: int, total: float) -> float:
    """CR0 from each subject's (questions, sum of differences), over n questions whose differences sum to total."""
    # Each subject's sum of departures from the delta, times n: n Σ_s dᵢ − n_s Σ dᵢ. With whole-number
    # differences this is exact, so subjects that all moved by the same amount give exactly 0.
    scaled = [n * subject_total - count * total for count, subject_total in sums]
    return math.sqrt(math.fsum(t * t for t in scaled)) / n / n


def _paired_se(diffs: list[float]) -> float:
    n = len(diffs)
    delta = math.fsum(diffs) / n
    return math.sqrt(math.fsum((d - delta) ** 2 for d in diffs) / (n - 1)) / math.sqrt(n)


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
    return _paired_se(_differences(candidate, baseline))


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


def clustered_standard_error(
    candidate: list[float], baseline: list[float], clusters: list[str], correction: str = "CR0"
) -> float:
    """The standard error of the paired delta with questions clustered by subject.

    In words: "within each subject add up how far its questions' differences sit from the overall
    delta; square those subject totals, add them, take the square root and divide by the number of
    questions": √(Σ_s (Σ_{i∈s} (dᵢ − d̄))²) / n (correction="CR0", the sources' form). Subjects
    whose questions move together widen it. correction="CR1" multiplies it by √(G/(G − 1)) for G
    subjects, the small-sample factor statsmodels and Stata apply; with few subjects both are
    unreliable (see gate_verdict).
    """
    diffs = _differences(candidate, baseline)
    clusters = _checked_clusters(clusters, len(diffs))
    return _clustered_se(diffs, clusters, checks.choice("correction", correction, CORRECTIONS))


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
    """Decide whether a score change needs a human: the delta, its errors, the band and the verdict.

    The error the gate uses, ``gate_se``, is the larger of the clustered error with the
    small-sample factor (CR1) and the paired one (``gate_se_basis`` says which). The band is
    ``critical`` × gate_se, where ``critical`` is Student's t with G − 1 degrees of freedom at
    the level that ``multiple`` (default 2) standard errors have on the normal curve (two-sided
    95.45 % for 2): 2.05 with 57 subjects, 4.53 with 3. verdict is "investigate" when |delta|
    exceeds the band; otherwise "too little data" when the band is wider than ±DECISIVE_BAND
    (5 points), and "ship" when it is not. ``questions_needed``: how many questions a band of
    ±TARGET_BAND (2 points) would take (see questions_for_band), None when the band is that narrow
    already. ``few_subjects`` is true below FEW_SUBJECTS subjects,
    where a subject-clustered error is unreliable. ``p_value``: the two-sided Student's t
    probability of a delta at least this far from 0 by chance, on gate_se.
    Keys: delta, paired_se, clustered_se (CR0), clustered_se_cr1, subjects, df, few_subjects,
    gate_se, gate_se_basis ("clustered" or "paired"), critical, band, p_value, verdict,
    questions_needed.
    """
    diffs = _differences(candidate, baseline)
    return _verdict(diffs, _checked_clusters(clusters, len(diffs)), _checked_multiple(multiple))


def group_verdicts(
    candidate: list[float], baseline: list[float], clusters: list[str], groups: dict[str, str],
    multiple: float = GATE_SE_MULTIPLE,
) -> list[dict]:
    """The gate on each group of subjects alone and on the rest of the questions, to see whether one
    group moved on its own: [{"group", "inside", "rest"}] by group name, each side gate_verdict's
    keys plus ``n``, its number of questions. ``groups`` maps a subject to its group (a subject it
    leaves out is in no group). A group whose questions, or the rest's, cover fewer than two
    subjects has no clustered error and is left out. The inputs are checked once, not per group:
    on MMLU's 14,042 questions in four groups that is eight gates' checks saved.
    """
    diffs = _differences(candidate, baseline)
    clusters = _checked_clusters(clusters, len(diffs))
    multiple = _checked_multiple(multiple)
    group_of = [groups.get(cluster) for cluster in clusters]
    sums = _subject_sums(diffs, clusters)  # a subject is wholly in a group or in its rest

    def gate_on(rows: list[int]) -> dict | None:
        subset = [clusters[i] for i in rows]
        if len(set(subset)) < 2:
            return None
        return {"n": len(rows), **_verdict([diffs[i] for i in rows], subset, multiple, sums)}

    found = []
    for group in sorted(set(group_of) - {None}):
        inside = gate_on([i for i, g in enumerate(group_of) if g == group])
        rest = gate_on([i for i, g in enumerate(group_of) if g != group])
        if inside and rest:
            found.append({"group": group, "inside": inside, "rest": rest})
    return found


def _checked_multiple(multiple: float) -> float:
    multiple = checks.number("multiple", multiple)
    if multiple <= 0:
        raise ValueError(f"multiple must be positive, got {multiple}")
    if multiple > MAX_MULTIPLE:
        raise ValueError(f"multiple must be at most {MAX_MULTIPLE:g} (standard errors), got {multiple}")
    return multiple


def _verdict(diffs: list[float], clusters: list[str], multiple: float,
             sums: dict[str, tuple[int, float]] | None = None) -> dict:
    """gate_verdict on checked inputs: the differences, their subjects (two or more) and the multiple;
    ``sums``: _subject_sums of these or more questions (with every subject's questions), if known."""
    total = math.fsum(diffs)
    delta = total / len(diffs)
    named = set(clusters)
    subjects = len(named)
    paired = _paired_se(diffs)
    if sums is None:
        sums = _subject_sums(diffs, clusters)
    cr0 = _cr0((sums[cluster] for cluster in named), len(diffs), total)
    cr1 = _cr1(cr0, subjects)
    gate_se = max(cr1, paired)
    df = _degrees_of_freedom(min(subjects - 1, MAX_DEGREES_OF_FREEDOM))  # beyond it, t is the normal curve
    # The normal curve's upper tail beyond the multiple, from erfc: NormalDist().cdf(-multiple) takes it
    # from 1 + erf, which is 0.0 past 8.3 standard errors (and t's quantile of 0 is beyond every float).
    critical = _t_beyond(0.5 * math.erfc(multiple / math.sqrt(2.0)), df)
    band = critical * gate_se
    if gate_se > 0:
        p_value = 2.0 * _t_upper_tail(abs(delta) / gate_se, df)
    else:
        p_value = 1.0 if delta == 0 else 0.0
    if abs(delta) > band:
        verdict = "investigate"
    else:
        verdict = "too little data" if band > DECISIVE_BAND else "ship"
    return {
        "delta": delta,
        "paired_se": paired,
        "clustered_se": cr0,
        "clustered_se_cr1": cr1,
        "subjects": subjects,
        "df": subjects - 1,
        "few_subjects": subjects < FEW_SUBJECTS,
        "gate_se": gate_se,
        "gate_se_basis": "clustered" if cr1 >= paired else "paired",
        "critical": critical,
        "band": band,
        "p_value": p_value,
        "verdict": verdict,
        "questions_needed": questions_for_band(len(diffs), band),
    }


def questions_for_band(n: int, band: float, target: float = TARGET_BAND) -> int | None:
    """How many questions a band of ±``target`` would take, at today's spread and subjects, given a
    band of ±``band`` on ``n`` questions; None when the band is within the target already.

    In words: "the band narrows with the square root of the number of questions, so multiply the
    questions by the square of how many times too wide the band is": ⌈n (band / target)²⌉. Both
    errors the gate takes scale so: the paired error is sd(d)/√n, and the clustered one is too when
    every subject grows in proportion and its questions keep today's spread. The subjects, and so
    Student's t, stay as they are; when subjects truly differ in their change, more questions in
    the same subjects narrow the clustered error less than this, and more subjects help more.
    """
    if not band > target:
        return None
    return math.ceil(n * (band / target) ** 2 - 1e-9)  # a float a hair above a whole number is that number
