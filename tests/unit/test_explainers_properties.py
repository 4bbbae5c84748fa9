"""Property tests: explainers/ against scipy and numpy, an independent implementation of the same maths.

Hypothesis draws the inputs; each test computes the answer a second way with scipy/numpy and
checks they agree to within floating-point rounding.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import lazy_import
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import explainers as ex

special, sps = lazy_import("scipy.special"), lazy_import("scipy.stats")
pytestmark = pytest.mark.xdist_group("scipy")  # one worker imports it (conftest.lazy_import)

shares = st.floats(0.0, 1.0, allow_nan=False)
sizes = st.integers(1, 50_000)
levels = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999])


def isclose(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


@given(st.floats(1e-9, 1 - 1e-9))
def test_normal_quantile_matches_scipy(q):
    assert isclose(ex.normal_quantile(q), sps.norm.ppf(q), rel=1e-9, abs_=1e-9)


@given(shares, sizes)
def test_standard_error_matches_numpy(p, n):
    assert isclose(ex.standard_error(p, n), float(np.sqrt(p * (1 - p) / n)))


@given(shares, sizes, levels)
def test_normal_interval_matches_scipy(p, n, level):
    half = sps.norm.ppf(0.5 + level / 2) * np.sqrt(p * (1 - p) / n)
    low, high = p - half, p + half
    got = ex.confidence_interval(p, n, level)
    assert isclose(got[0], max(0.0, low)) and isclose(got[1], min(1.0, high))


@given(st.integers(1, 5000), st.data(), levels)
def test_wilson_interval_matches_scipy(n, data, level):
    k = data.draw(st.integers(0, n))
    expected = sps.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    low, high = ex.confidence_interval(k / n, n, level, method="wilson")
    assert isclose(low, expected.low, abs_=1e-9) and isclose(high, expected.high, abs_=1e-9)


@given(st.integers(1, 3000), st.data(), st.floats(0.0, 1.0))
def test_binomial_cdf_matches_scipy(n, data, p):
    k = data.draw(st.integers(0, n))
    assert isclose(ex.binomial_cdf(k, n, p), float(sps.binom.cdf(k, n, p)), rel=1e-8, abs_=1e-10)


@given(st.integers(1, 20_000), st.integers(2, 10), levels)
def test_exact_chance_band_matches_scipy_quantiles(n, options, level):
    chance, tail = 1 / options, (1 - level) / 2
    low, high = ex.chance_band(n, options, level, method="exact")
    for got, q in ((low, tail), (high, 1 - tail)):
        expected = sps.binom.ppf(q, n, chance)
        if round(got * n) != expected:
            # Only a genuine near-tie may differ: the cumulative probability at the boundary is
            # within rounding of the target, so both answers are right to machine precision.
            boundary = min(round(got * n), expected)
            assert abs(sps.binom.cdf(boundary, n, chance) - q) < 1e-9


@given(st.integers(1, 20_000), st.integers(2, 10), levels)
def test_normal_chance_band_matches_scipy(n, options, level):
    chance = 1 / options
    half = sps.norm.ppf(0.5 + level / 2) * np.sqrt(chance * (1 - chance) / n)
    low, high = chance - half, chance + half
    got = ex.chance_band(n, options, level)
    assert isclose(got[0], max(0.0, low)) and isclose(got[1], min(1.0, high))


@given(st.lists(st.tuples(st.integers(1, 2000), shares), min_size=1, max_size=60))
def test_weighted_and_plain_means_match_numpy(groups):
    counts, accs = zip(*groups, strict=True)
    assert isclose(ex.weighted_accuracy(list(counts), list(accs)), float(np.average(accs, weights=counts)))
    assert isclose(ex.plain_mean(list(accs)), float(np.mean(accs)))


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=20))
def test_softmax_matches_scipy(logits):
    assert np.allclose(ex.softmax(logits), special.softmax(logits), rtol=1e-9, atol=1e-12)


@given(st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from("ABCD")), min_size=1, max_size=200))
def test_accuracy_matches_numpy(pairs):
    predictions, keys = (list(x) for x in zip(*pairs, strict=True))
    assert isclose(ex.accuracy(predictions, keys), float(np.mean(np.array(predictions) == np.array(keys))))


answers = st.lists(st.tuples(shares, st.integers(0, 1)), min_size=1, max_size=300)


def numpy_rms_equal_count(conf: np.ndarray, right: np.ndarray, bins: int) -> float:
    """Hendrycks et al. (2019): sort by confidence, runs of N // bins, the remainder in the last run."""
    order = np.argsort(conf, kind="stable")
    conf, right = conf[order], right[order]
    size = len(conf) // bins
    edges = [j * size for j in range(bins)] + [len(conf)]
    total = 0.0
    for start, stop in zip(edges[:-1], edges[1:], strict=True):
        total += (stop - start) * (right[start:stop].mean() - conf[start:stop].mean()) ** 2
    return math.sqrt(total / len(conf))


@given(answers, st.data())
def test_rms_equal_count_matches_numpy(pairs, data):
    conf, right = (np.array(x, dtype=float) for x in zip(*pairs, strict=True))
    bins = data.draw(st.integers(1, len(conf)))
    got = ex.rms_calibration_error(conf.tolist(), right.tolist(), bins=bins)
    assert isclose(got, numpy_rms_equal_count(conf, right, bins), abs_=1e-9)


# Bins up to 10**15, the largest whole number the functions take: most of them are then empty.
@given(answers, st.integers(1, 20) | st.integers(21, 10**15))
def test_rms_fixed_width_matches_numpy(pairs, bins):
    conf, right = (np.array(x, dtype=float) for x in zip(*pairs, strict=True))
    which = np.minimum((conf * bins).astype(np.int64), bins - 1)
    total = sum((which == j).sum() * (right[which == j].mean() - conf[which == j].mean()) ** 2 for j in np.unique(which))
    got = ex.rms_calibration_error(conf.tolist(), right.tolist(), bins=bins, binning="fixed_width")
    assert isclose(got, math.sqrt(total / len(conf)), abs_=1e-9)


@given(answers)
def test_calibration_gap_matches_numpy(pairs):
    conf, right = (np.array(x, dtype=float) for x in zip(*pairs, strict=True))
    assert isclose(ex.calibration_gap(conf.tolist(), right.tolist()), abs(conf.mean() - right.mean()), abs_=1e-12)


@given(st.lists(st.tuples(shares, shares), min_size=2, max_size=57))
def test_correlation_matches_scipy(pairs):
    conf, acc = (list(x) for x in zip(*pairs, strict=True))
    assume(max(conf) - min(conf) > 1e-6 and max(acc) - min(acc) > 1e-6)
    assert isclose(ex.confidence_accuracy_correlation(conf, acc), sps.pearsonr(conf, acc).statistic, abs_=1e-7)


paired_runs = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from(["law", "math", "art", "virology", "ethics"])),
    min_size=2, max_size=400,
)


@given(paired_runs)
def test_paired_delta_and_se_match_scipy(rows):
    cand, base, _ = (list(x) for x in zip(*rows, strict=True))
    d = np.array(cand, dtype=float) - np.array(base, dtype=float)
    assert isclose(ex.paired_delta(cand, base), float(d.mean()), abs_=1e-12)
    assert isclose(ex.paired_standard_error(cand, base), float(sps.sem(d)), abs_=1e-12)


@given(paired_runs)
def test_clustered_se_matches_direct_numpy(rows):
    cand, base, subjects = (list(x) for x in zip(*rows, strict=True))
    assume(len(set(subjects)) >= 2)
    d = np.array(cand, dtype=float) - np.array(base, dtype=float)
    subject = np.array(subjects)
    resid = d - d.mean()
    cluster_sums = np.array([resid[subject == s].sum() for s in np.unique(subject)])
    expected = float(np.sqrt((cluster_sums ** 2).sum()) / len(d))
    assert isclose(ex.clustered_standard_error(cand, base, subjects), expected, abs_=1e-12)
    verdict = ex.gate_verdict(cand, base, subjects)
    g = len(cluster_sums)
    gate_se = max(expected * np.sqrt(g / (g - 1)), float(sps.sem(d)))
    band = float(sps.t.isf(sps.norm.sf(2.0), g - 1)) * gate_se
    assert isclose(verdict["band"], band, abs_=1e-12)
    if not isclose(abs(d.mean()), band, abs_=1e-12):  # a tie on the edge can round either way
        assert verdict["verdict"] == ("investigate" if abs(d.mean()) > band
                                      else "too little data" if band > ex.DECISIVE_BAND else "ship")


@given(st.floats(0, 1), st.integers(2, 10))
def test_expected_score_is_the_mixture_mean(k, options):
    # A model that knows a share k scores 1 on those and 1/options in expectation on the rest.
    assert isclose(ex.expected_score(k, options), float(np.average([1.0, 1.0 / options], weights=[k, 1 - k])))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_simulated_contamination_is_binomially_close_to_expected(seed):
    run = ex.simulate_contamination(0.45, 0.3, questions=20_000, seed=seed)
    # Each question is right with probability `expected`, independently: stay within 5 SE.
    assert abs(run["measured"] - run["expected"]) < 5 * ex.standard_error(run["expected"], 20_000)


# --- any JSON arguments: a result or a ValueError naming the problem, never another exception ---

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
FUZZED = sorted(ex.PUBLIC)


@pytest.mark.parametrize("name", FUZZED)
@settings(max_examples=min(40, settings.default.max_examples))  # the profile's count (conftest.py), at most 40
@given(data=st.data())
def test_any_json_arguments_give_a_result_or_a_value_error(name, data):
    import inspect
    import json

    params = list(inspect.signature(ex.PUBLIC[name]).parameters)
    args = data.draw(st.fixed_dictionaries({}, optional={p: json_values for p in params}))
    try:
        result = ex.call_public(name, args)
    except ValueError as error:
        assert str(error)
    else:
        json.dumps(result, allow_nan=False)
