"""The release gate's statistics against statsmodels, scipy and numpy.

explainers.release_gate's clustered errors are a cluster-robust (sandwich) standard error of a
mean: the same as statsmodels' OLS of the per-question deltas on a constant with
cov_type="cluster" and the subjects as groups. CR0 is use_correction=False; CR1 is statsmodels'
default correction G/(G − 1) · (N − 1)/(N − K), which is G/(G − 1) here since K = 1. Tests use
Student's t with G − 1 degrees of freedom, as statsmodels does with use_t=True (its default
df_correction). The pure-Python Student's t is checked against scipy.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import lazy_import

import explainers as ex
from benchmarks.gate import compare, report_lines
from explainers import release_gate

sps = lazy_import("scipy.stats")
pytestmark = pytest.mark.xdist_group("scipy")  # one worker imports it (conftest.lazy_import)

# -- Student's t ------------------------------------------------------------------------------

QUANTILE_LEVELS = (1e-12, 1e-9, 1e-6, 1e-4, 0.001, 0.01, 0.025, 0.05, 0.1, 0.25, 0.4, 0.49, 0.5, 0.51, 0.6, 0.75, 0.9,
                   0.95, 0.975, 0.97725, 0.99, 0.995, 0.999, 0.9999, 1 - 1e-6)


@pytest.mark.parametrize("df", range(1, 201))
def test_student_t_quantile_matches_scipy(df):
    for q in QUANTILE_LEVELS:
        expected = float(sps.t.ppf(q, df))
        assert ex.student_t_quantile(q, df) == pytest.approx(expected, rel=1e-9, abs=1e-9), q


@pytest.mark.parametrize("df", [1, 1.5, 2, 2.5, 3, 7, 30, 56, 200, 1000, 14041, 100_000])
def test_student_t_cdf_matches_scipy(df):
    for x in (-50.0, -4.0, -2.0, -1e-3, 0.0, 0.3, 1.0, 2.0, 2.05, 4.53, 12.0, 300.0):
        assert ex.student_t_cdf(x, df) == pytest.approx(float(sps.t.cdf(x, df)), rel=1e-10, abs=1e-15), x
        # the far tail keeps its digits too
        assert ex.student_t_cdf(-abs(x), df) == pytest.approx(float(sps.t.sf(abs(x), df)), rel=1e-9), x


# -- clustered data ---------------------------------------------------------------------------

def clustered_runs(subjects: int, size: int, seed: int, subject_sd: float = 0.1, shift: float = -0.03):
    """Paired 0/1 results whose subjects each change by their own amount (normal, sd ``subject_sd``),
    with unequal subject sizes (``size`` ± a third)."""
    rng = random.Random(seed)
    candidate, baseline, names = [], [], []
    for j in range(subjects):
        p = rng.uniform(0.35, 0.85)
        q = min(0.98, max(0.02, p + shift + rng.gauss(0, subject_sd)))
        for _ in range(rng.randint(size - size // 3, size + size // 3)):
            u = rng.random()
            baseline.append(int(u < p))
            candidate.append(int(u < q) if rng.random() < 0.7 else int(rng.random() < q))
            names.append(f"subject_{j:02d}")
    return candidate, baseline, names


def statsmodels_fit(candidate, baseline, names, use_correction: bool):
    import statsmodels.api as sm  # here, not at the top: it takes seconds to import, on every worker's collection

    d = np.array(candidate, float) - np.array(baseline, float)
    groups = np.unique(np.array(names), return_inverse=True)[1]
    return sm.OLS(d, np.ones((len(d), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": use_correction}, use_t=True)


def numpy_clustered(candidate, baseline, names):
    d = np.array(candidate, float) - np.array(baseline, float)
    s = np.array(names)
    sums = np.array([(d[s == k] - d.mean()).sum() for k in np.unique(s)])
    cr0 = np.sqrt((sums ** 2).sum()) / len(d)
    g = len(sums)
    return float(cr0), float(cr0 * np.sqrt(g / (g - 1)))


# (subjects, questions per subject about, seed, true change): 2, 3, 8 and 57 subjects, near noise and past it
CASES = [(2, 50, 1, -0.03), (2, 7, 2, -0.03), (3, 25, 3, -0.03), (3, 40, 4, -0.25), (8, 40, 5, -0.03),
         (8, 60, 6, -0.15), (57, 246, 7, -0.03), (57, 30, 8, -0.03), (57, 246, 9, -0.05)]


@pytest.mark.parametrize("subjects, size, seed, shift", CASES)
def test_clustered_errors_match_statsmodels_and_numpy(subjects, size, seed, shift):
    candidate, baseline, names = clustered_runs(subjects, size, seed, shift=shift)
    cr0 = ex.clustered_standard_error(candidate, baseline, names)
    cr1 = ex.clustered_standard_error(candidate, baseline, names, correction="CR1")
    plain, corrected = (statsmodels_fit(candidate, baseline, names, flag) for flag in (False, True))
    assert cr0 == pytest.approx(float(plain.bse[0]), rel=1e-10)
    assert cr1 == pytest.approx(float(corrected.bse[0]), rel=1e-10)
    assert (cr0, cr1) == pytest.approx(numpy_clustered(candidate, baseline, names), rel=1e-12)
    # statsmodels' factor G/(G − 1) · (N − 1)/(N − K) with K = 1 is G/(G − 1): exactly our CR1
    assert (cr1 / cr0) ** 2 == pytest.approx(subjects / (subjects - 1), rel=1e-12)
    # its t inference uses G − 1 degrees of freedom (df_correction, the default)
    assert corrected.df_resid_inference == subjects - 1 and plain.df_resid_inference == subjects - 1

    gate = ex.gate_verdict(candidate, baseline, names)
    assert gate["delta"] == pytest.approx(float(corrected.params[0]), abs=1e-15)
    assert gate["clustered_se"] == cr0 and gate["clustered_se_cr1"] == cr1
    assert gate["subjects"] == subjects and gate["df"] == subjects - 1
    assert gate["few_subjects"] == (subjects < release_gate.FEW_SUBJECTS)
    assert gate["gate_se"] == max(cr1, gate["paired_se"])
    level = 2 * sps.norm.sf(2.0)  # two standard errors on the normal curve: 4.55 % two-sided
    assert gate["critical"] == pytest.approx(float(sps.t.isf(level / 2, subjects - 1)), rel=1e-10)
    assert gate["band"] == pytest.approx(gate["critical"] * gate["gate_se"], rel=1e-15)
    if gate["gate_se_basis"] == "clustered":  # then the gate's test is statsmodels' own
        assert gate["p_value"] == pytest.approx(float(corrected.pvalues[0]), rel=1e-8)
        low, high = corrected.conf_int(alpha=level)[0]
        assert gate["delta"] - gate["band"] == pytest.approx(float(low), rel=1e-9)
        assert gate["delta"] + gate["band"] == pytest.approx(float(high), rel=1e-9)
    assert (gate["verdict"] == "investigate") == (gate["p_value"] < level)


def test_few_subjects_never_rest_on_a_clustered_error_below_the_paired_one():
    for subjects, size, seed, _ in CASES:
        for s in range(5):
            candidate, baseline, names = clustered_runs(subjects, size, seed * 10 + s, subject_sd=0.0)
            gate = ex.gate_verdict(candidate, baseline, names)
            assert gate["gate_se"] >= gate["paired_se"] and gate["gate_se"] >= gate["clustered_se_cr1"]
            assert gate["gate_se_basis"] == ("paired" if gate["clustered_se_cr1"] < gate["paired_se"] else "clustered")


# -- the cases the issue met ------------------------------------------------------------------

def three_equal_subjects():
    """3 subjects × 25 questions, each subject down by exactly 4 points (one question), at about 50 %."""
    candidate, baseline, names = [], [], []
    for subject in ("anatomy", "astronomy", "virology"):
        for i in range(25):
            baseline.append(int(i < 13))
            candidate.append(int(i < 12))
            names.append(subject)
    return candidate, baseline, names


@pytest.mark.parametrize("multiple", [8.5, 9.0, 10.0])
@pytest.mark.parametrize("subjects", [2, 3, 57])
def test_a_wide_gate_has_a_band(multiple, subjects):
    """Past 8.3 standard errors the normal tail was taken as 0 (NormalDist().cdf(-9) is 0.0), and
    the gate refused a multiple it documents (up to 10) with "beyond the largest number"."""
    candidate, baseline, names = [1, 0] * subjects, [0, 1] * subjects, [f"s{i // 2}" for i in range(2 * subjects)]
    gate = ex.gate_verdict(candidate, baseline, names, multiple=multiple)
    assert gate["critical"] == pytest.approx(float(sps.t.isf(sps.norm.sf(multiple), subjects - 1)), rel=1e-9)


def test_three_equal_subjects_no_longer_gate_on_zero():
    candidate, baseline, names = three_equal_subjects()
    gate = ex.gate_verdict(candidate, baseline, names)
    assert gate["delta"] == pytest.approx(-0.04)
    assert gate["clustered_se"] == 0.0 and gate["clustered_se_cr1"] == 0.0  # CR0 is exactly 0 here
    assert float(statsmodels_fit(candidate, baseline, names, False).bse[0]) == pytest.approx(0.0, abs=1e-15)
    d = np.array(candidate, float) - np.array(baseline, float)
    paired = float(d.std(ddof=1) / np.sqrt(len(d)))
    assert gate["paired_se"] == pytest.approx(paired, rel=1e-12)
    assert gate["few_subjects"] and gate["gate_se_basis"] == "paired" and gate["gate_se"] == gate["paired_se"]
    assert gate["critical"] == pytest.approx(float(sps.t.isf(sps.norm.sf(2.0), 2)), rel=1e-10)
    # 75 questions: a band of ±9.9 points cannot tell a 4-point drop from luck
    assert gate["band"] > 0.05 > abs(gate["delta"]) and gate["verdict"] == "too little data"

    report = compare({"candidate": candidate, "baseline": baseline, "subjects": names})
    text = "\n".join(report_lines(report))
    assert "Only 3 subjects" in text and "unreliable" in text and "paired error" in text
    assert "SE_cl = 0.00" not in text and "× SE = 0.00" not in text
    assert report["verdict"] == "too little data" and report["few_subjects"] and report["shape"] == "undecided"
    assert "Verdict: too little data (|Δ| ≤ 4.53 × SE" in text and "Too little data to decide: a band of ±" in text


def test_three_subjects_of_forty_cannot_decide_and_say_how_many_questions_would():
    """The issue's case: 3 subjects × 40 questions. Past ±5 points the verdict is "too little data",
    never "ship"; the questions a ±2-point band takes follow from the band narrowing as 1/√n at the
    same spread, checked here with scipy's Student's t on the paired error numpy computes."""
    candidate, baseline, names = clustered_runs(3, 40, 5, subject_sd=0.02, shift=-0.075)
    gate = ex.gate_verdict(candidate, baseline, names)
    assert gate["band"] > ex.DECISIVE_BAND and abs(gate["delta"]) <= gate["band"]
    assert gate["verdict"] == "too little data"
    d = np.array(candidate, float) - np.array(baseline, float)
    critical = float(sps.t.ppf(sps.norm.cdf(2.0), 2))
    se = max(gate["clustered_se_cr1"], float(d.std(ddof=1) / np.sqrt(len(d))))
    needed = gate["questions_needed"]
    band_at = lambda n: critical * se * np.sqrt(len(d) / n)  # noqa: E731  (the same spread over n questions)
    assert band_at(needed) <= ex.TARGET_BAND < band_at(needed - 1)
    # a narrow band has no number to give; a delta past even a wide band is decided
    narrow = clustered_runs(57, 246, 7, subject_sd=0.0, shift=0.0)
    assert ex.gate_verdict(*narrow)["questions_needed"] is None
    far = ex.gate_verdict([1] * 60 + [0] * 60, [0] * 60 + [1] * 60, ["a", "b", "c"] * 40)
    assert far["band"] > ex.DECISIVE_BAND and far["verdict"] == "too little data"
    dropped = ex.gate_verdict([0] * 120, [1] * 100 + [0] * 20, ["a", "b", "c"] * 40)
    assert dropped["band"] > ex.DECISIVE_BAND and dropped["verdict"] == "investigate"


def test_five_pasted_questions_cannot_decide_and_the_axis_stops_at_100_points():
    from widgetkit.charts import subject_delta_chart

    candidate, baseline, names = [1, 0, 1, 0, 0], [1, 1, 0, 1, 0], ["a", "a", "b", "b", "b"]
    report = compare({"candidate": candidate, "baseline": baseline, "subjects": names})
    assert report["band"] > 1 and report["verdict"] == "too little data"
    fig = subject_delta_chart(report["subject_rows"], report["delta"], report["band"], 2, report["verdict"], 600)
    ticks = [m["text"] for m in fig["marks"] if m["tag"] == "text" and m["attrs"]["class"] == "fig-tick"
             and m["attrs"].get("text-anchor") == "end"]
    assert ticks[0] == "−100" and ticks[-1] == "+100"
    assert any("(cut at the axis)" in (m.get("text") or "") for m in fig["marks"][0]["children"])


def test_eight_subjects_warn():
    candidate, baseline, names = clustered_runs(8, 40, 11, subject_sd=0.02, shift=-0.04)
    report = compare({"candidate": candidate, "baseline": baseline, "subjects": names})
    assert report["subjects"] == 8 and report["few_subjects"] and report["df"] == 7
    lines = report_lines(report)
    assert any(line.startswith("Only 8 subjects") and "Cameron & Miller 2015" in line for line in lines)


def test_fifty_seven_subjects_do_not_warn():
    candidate, baseline, names = clustered_runs(57, 246, 7)
    report = compare({"candidate": candidate, "baseline": baseline, "subjects": names})
    assert not report["few_subjects"]
    assert not any("unreliable" in line for line in report_lines(report))


def test_each_group_and_its_rest_are_gated_as_their_own_questions_would_be():
    """group_verdicts checks the runs once and gates each group's questions and the rest's: the same
    numbers as gate_verdict on those questions alone. A group of one subject (no clustered error) is
    left out; so is a group whose rest would be one subject."""
    candidate, baseline, names = clustered_runs(12, 30, 21, shift=-0.08)
    candidate = [float(c) * 0.75 for c in candidate]  # scores between 0 and 1, not only 0 and 1
    groups = {f"subject_{j:02d}": ("STEM" if j < 5 else "humanities" if j < 11 else "alone") for j in range(12)}
    found = release_gate.group_verdicts(candidate, baseline, names, groups, multiple=1.5)
    assert [f["group"] for f in found] == ["STEM", "humanities"]
    for f in found:
        inside = [i for i, s in enumerate(names) if groups[s] == f["group"]]
        rest = [i for i, s in enumerate(names) if groups[s] != f["group"]]
        for side, rows in (("inside", inside), ("rest", rest)):
            alone = ex.gate_verdict([candidate[i] for i in rows], [baseline[i] for i in rows], [names[i] for i in rows],
                                    multiple=1.5)
            assert f[side] == {"n": len(rows), **alone}
    # Subjects the mapping leaves out are in no group, only in each group's rest.
    (two,) = release_gate.group_verdicts(candidate, baseline, names, {"subject_00": "two", "subject_01": "two"})
    assert two["inside"]["subjects"] == 2 and two["rest"]["subjects"] == 10
    assert two["inside"]["n"] + two["rest"]["n"] == len(names)
    with pytest.raises(ValueError, match=r"candidate\[3\]"):
        release_gate.group_verdicts(candidate[:3] + [2] + candidate[4:], baseline, names, groups)
