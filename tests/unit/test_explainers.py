"""Unit tests for explainers/: golden numbers from the paper, every public function, every check.

This file runs twice: under pytest in CPython, and inside Pyodide under Node
(tests/unit/test_explainers_pyodide.py), so it uses only the standard library and plain asserts: no
pytest imports. Every test function is listed in the module namespace as ``test_*``.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import explainers as ex
from explainers import calibration


def close(a: float, b: float, tol: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def error_message(fn, *args, **kwargs) -> str:
    """Call fn and return its ValueError's message; fail if it raises none."""
    try:
        fn(*args, **kwargs)
    except ValueError as error:
        return str(error)
    raise AssertionError(f"{fn.__name__}{args}{kwargs} raised no ValueError")


CALIBRATION_CONF = [0.9, 0.9, 0.95, 0.85, 0.9, 0.4, 0.35, 0.45, 0.4, 0.4]
CALIBRATION_RIGHT = [1, 1, 1, 0, 0, 1, 0, 1, 0, 0]


# --- the numbers the page must reproduce (seeds 000 and 001) -----------------------------------

def test_golden_standard_error_of_a_guesser_on_100_questions():
    assert round(ex.standard_error(0.25, 100), 4) == 0.0433


def test_golden_guessing_band_on_100_questions():
    low, high = ex.chance_band(100)
    assert (round(low, 3), round(high, 3)) == (0.165, 0.335)


def test_golden_gpt3_margin_on_the_full_test():
    assert round(100 * ex.margin_of_error(0.439, 14079), 1) == 0.8


def test_golden_weighted_against_plain_mean_on_two_groups():
    assert close(ex.weighted_accuracy([100, 300], [0.6, 0.3]), 0.375)
    assert round(ex.plain_mean([0.6, 0.3]), 2) == 0.45


def test_golden_ten_answer_calibration_example():
    assert round(ex.average_confidence(CALIBRATION_CONF), 2) == 0.65
    assert ex.accuracy(["R" if r else "W" for r in CALIBRATION_RIGHT], ["R"] * 10) == 0.5
    assert round(ex.calibration_gap(CALIBRATION_CONF, CALIBRATION_RIGHT), 2) == 0.15
    assert round(ex.rms_calibration_error(CALIBRATION_CONF, CALIBRATION_RIGHT, bins=2), 3) == 0.212


def test_golden_calibration_example_groups():
    groups = ex.calibration_bins(CALIBRATION_CONF, CALIBRATION_RIGHT, bins=2)
    assert [g["n"] for g in groups] == [5, 5]
    assert [round(g["confidence"], 2) for g in groups] == [0.4, 0.9]
    assert [round(g["accuracy"], 2) for g in groups] == [0.4, 0.6]


def test_golden_release_gate_margins():
    assert round(100 * ex.margin_of_error(0.85, 14042), 2) == 0.59
    assert round(100 * ex.standard_error(0.85, 14042), 2) == 0.30
    assert round(100 * ex.margin_of_error(0.85, 100), 1) == 7.0


def test_golden_letter_prediction():
    assert ex.predict({"A": 0.06, "B": 0.81, "C": 0.07, "D": 0.06}) == "B"


def test_golden_five_question_accuracy():
    assert ex.accuracy(["B", "C", "A", "D", "B"], ["B", "A", "A", "D", "C"]) == 0.6


def test_golden_chance_explorer_walkthrough():
    assert ex.is_distinguishable_from_chance(0.30, 100) is False
    assert ex.is_distinguishable_from_chance(0.30, 1000) is True
    low, high = ex.confidence_interval(0.30, 100)
    assert round(100 * (high - low) / 2) == 9


# --- stats ----------------------------------------------------------------------------------

def test_normal_quantile():
    assert round(ex.normal_quantile(0.975), 2) == 1.96
    assert close(ex.normal_quantile(0.5), 0.0)
    assert close(ex.normal_quantile(0.1), -ex.normal_quantile(0.9), 1e-9)
    assert "q" in error_message(ex.normal_quantile, 1.0)


def test_standard_error_edges():
    assert ex.standard_error(0.0, 10) == 0.0
    assert ex.standard_error(1.0, 10) == 0.0
    assert close(ex.standard_error(0.5, 1), 0.5)


def test_confidence_interval_normal_is_symmetric_and_clipped():
    low, high = ex.confidence_interval(0.5, 100)
    assert close(0.5 - low, high - 0.5)
    assert ex.confidence_interval(0.99, 10)[1] == 1.0
    assert ex.confidence_interval(0.01, 10)[0] == 0.0


def test_confidence_interval_wider_at_higher_level():
    narrow = ex.confidence_interval(0.4, 200, level=0.8)
    wide = ex.confidence_interval(0.4, 200, level=0.99)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]


def test_wilson_interval_stays_off_the_edges_and_contains_p():
    low, high = ex.confidence_interval(0.0, 20, method="wilson")
    assert low == 0.0 and 0.0 < high < 0.25
    low, high = ex.confidence_interval(0.3, 50, method="wilson")
    assert low < 0.3 < high


def test_binomial_cdf():
    assert close(ex.binomial_cdf(0, 2, 0.5), 0.25)
    assert close(ex.binomial_cdf(1, 2, 0.5), 0.75)
    assert ex.binomial_cdf(5, 3, 0.2) == 1.0
    assert ex.binomial_cdf(0, 5, 0.0) == 1.0
    assert ex.binomial_cdf(4, 5, 1.0) == 0.0


def test_exact_chance_band_on_100_questions():
    assert ex.chance_band(100, method="exact") == (0.17, 0.34)


def test_chance_band_with_other_option_counts():
    low, high = ex.chance_band(1000, options=10)
    assert low < 0.1 < high
    assert close((low + high) / 2, 0.1)


def test_distinguishable_below_chance_too():
    assert ex.is_distinguishable_from_chance(0.05, 500) is True


def test_stats_errors_name_the_argument():
    assert error_message(ex.standard_error, 1.5, 10).startswith("p ")
    assert error_message(ex.standard_error, -0.1, 10).startswith("p ")
    assert error_message(ex.standard_error, 0.5, 0).startswith("n ")
    assert error_message(ex.standard_error, 0.5, 2.5).startswith("n ")
    assert error_message(ex.standard_error, True, 10).startswith("p ")
    assert error_message(ex.standard_error, "0.5", 10).startswith("p ")
    assert error_message(ex.standard_error, float("nan"), 10).startswith("p ")
    assert error_message(ex.confidence_interval, 0.5, 10, level=1.0).startswith("level ")
    assert error_message(ex.confidence_interval, 0.5, 10, method="exact").startswith("method ")
    assert error_message(ex.chance_band, 10, options=1).startswith("options ")
    assert error_message(ex.chance_band, 10**6, method="exact").startswith("n ")
    assert error_message(ex.binomial_cdf, -1, 10, 0.5).startswith("k ")


def test_whole_numbers_given_as_integral_floats_are_accepted():
    assert ex.standard_error(0.25, 100.0) == ex.standard_error(0.25, 100)


# --- scoring ----------------------------------------------------------------------------------

def test_predict_ties_go_to_the_first_letter():
    assert ex.predict({"C": 0.5, "A": 0.5}) == "C"


def test_predict_errors():
    assert "letter_probs" in error_message(ex.predict, {})
    assert "letter_probs" in error_message(ex.predict, {"A": "high"})
    assert "letter_probs" in error_message(ex.predict, [0.1, 0.9])


def test_softmax_sums_to_one_and_keeps_order():
    probs = ex.softmax([1.0, 2.0, 3.0])
    assert close(sum(probs), 1.0)
    assert probs[0] < probs[1] < probs[2]
    assert close(probs[2], math.exp(3) / (math.exp(1) + math.exp(2) + math.exp(3)))


def test_softmax_does_not_overflow():
    probs = ex.softmax([1000.0, 1000.0])
    assert probs == [0.5, 0.5]
    assert "logits" in error_message(ex.softmax, [])


def test_accuracy_errors():
    assert "same length" in error_message(ex.accuracy, ["A"], ["A", "B"])
    assert "predictions" in error_message(ex.accuracy, [], [])
    assert "keys[0]" in error_message(ex.accuracy, ["A"], [1])


def test_weighted_accuracy_errors():
    assert "counts[1]" in error_message(ex.weighted_accuracy, [10, 0], [0.5, 0.5])
    assert "accuracies[0]" in error_message(ex.weighted_accuracy, [10], [1.2])
    assert "same length" in error_message(ex.weighted_accuracy, [10, 20], [0.5])


def test_plain_mean():
    assert close(ex.plain_mean([1, 2, 3, 4]), 2.5)
    assert "values" in error_message(ex.plain_mean, [])


def test_subject_and_group_accuracies():
    per_subject = ex.subject_accuracies(
        ["A", "B", "C", "D", "A"], ["A", "B", "D", "D", "B"], ["law", "law", "math", "math", "art"]
    )
    assert per_subject == {
        "law": {"n": 2, "correct": 2, "accuracy": 1.0},
        "math": {"n": 2, "correct": 1, "accuracy": 0.5},
        "art": {"n": 1, "correct": 0, "accuracy": 0.0},
    }
    groups = ex.group_accuracies(per_subject, {"law": "humanities", "art": "humanities", "math": "stem"})
    assert groups["stem"] == {"n": 2, "subjects": 1, "accuracy": 0.5}
    assert groups["humanities"]["n"] == 3 and groups["humanities"]["subjects"] == 2
    assert close(groups["humanities"]["accuracy"], 2 / 3)


def test_group_accuracies_errors():
    results = {"law": {"n": 2, "accuracy": 0.5}}
    assert "law" in error_message(ex.group_accuracies, results, {"math": "stem"})
    assert "'n'" in error_message(ex.group_accuracies, {"law": {"accuracy": 0.5}}, {"law": "humanities"})
    assert "subject_results" in error_message(ex.group_accuracies, [], {"law": "humanities"})


# --- calibration ------------------------------------------------------------------------------

def test_perfect_calibration_has_zero_error():
    conf = [0.5] * 4 + [1.0] * 4
    right = [1, 0, 1, 0, 1, 1, 1, 1]
    assert ex.calibration_gap(conf, right) == 0.0
    assert ex.rms_calibration_error(conf, right, bins=2) == 0.0


def test_rms_is_at_least_the_gap():
    assert ex.rms_calibration_error(CALIBRATION_CONF, CALIBRATION_RIGHT, bins=2) >= ex.calibration_gap(
        CALIBRATION_CONF, CALIBRATION_RIGHT
    )


def test_equal_count_bins_put_the_remainder_last():
    groups = ex.calibration_bins([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], [1] * 7, bins=3)
    assert [g["n"] for g in groups] == [2, 2, 3]


def test_fixed_width_bins_skip_empty_ones_and_include_one():
    groups = ex.calibration_bins([0.05, 0.07, 0.95, 1.0], [0, 1, 1, 1], bins=10, binning="fixed_width")
    assert [g["n"] for g in groups] == [2, 2]
    assert close(groups[0]["confidence"], 0.06) and groups[0]["accuracy"] == 0.5
    assert ex.rms_calibration_error([0.05, 0.07, 0.95, 1.0], [0, 1, 1, 1], bins=10, binning="fixed_width") > 0


def test_bins_for_each_count_are_calibration_bins_for_each_count():
    confidences = [0.91, 0.3, 0.55, 0.3, 0.72, 0.05, 1.0, 0.64, 0.18, 0.99, 0.41]
    correct = [1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0]
    for binning in ("equal_count", "fixed_width"):
        each = [ex.calibration_bins(confidences, correct, bins, binning) for bins in range(1, 11)]
        assert calibration.calibration_bins_for_each_count(confidences, correct, 10, binning) == each
    assert "bins must be at most" in error_message(calibration.calibration_bins_for_each_count, [0.5], [1], 2)
    assert "most" in error_message(calibration.calibration_bins_for_each_count, [0.5], [1], 0)
    assert "same length" in error_message(calibration.calibration_bins_for_each_count, [0.5], [1, 0], 1)


def test_calibration_accepts_true_false():
    assert ex.calibration_gap([0.5, 0.5], [True, False]) == 0.0


def test_calibration_errors():
    assert "bins" in error_message(ex.rms_calibration_error, [0.5, 0.6], [1, 0], bins=3)
    assert "binning" in error_message(ex.calibration_bins, [0.5], [1], bins=1, binning="quantile")
    assert "same length" in error_message(ex.calibration_gap, [0.5], [1, 0])
    assert "confidences[0]" in error_message(ex.average_confidence, [1.5])
    assert "correct[1]" in error_message(ex.calibration_gap, [0.5, 0.5], [1, 2])


def test_confidence_accuracy_correlation():
    assert close(ex.confidence_accuracy_correlation([0.3, 0.5, 0.7], [0.2, 0.4, 0.6]), 1.0)
    assert close(ex.confidence_accuracy_correlation([0.3, 0.5, 0.7], [0.6, 0.4, 0.2]), -1.0)
    assert "equal" in error_message(ex.confidence_accuracy_correlation, [0.1, 0.1, 0.1], [0.2, 0.4, 0.6])
    assert "confidences" in error_message(ex.confidence_accuracy_correlation, [0.1], [0.2])
    # Confidences a hair apart: their deviations' squares are 0.0 in floats (a ZeroDivisionError and a
    # 500 from the API before, found by schemathesis); r is that of any two distinct values, ±1.
    assert close(ex.confidence_accuracy_correlation([1.1450683352882681e-187, 5e-324], [0.758, 0.267]), 1.0)
    assert close(ex.confidence_accuracy_correlation([5e-324, 1e-323, 0.0], [0.5, 0.6, 0.4]), 1.0)


# --- release gate -----------------------------------------------------------------------------

CANDIDATE = [1, 1, 0, 1, 0, 1, 1, 0]
BASELINE = [1, 0, 0, 1, 1, 0, 1, 0]
SUBJECTS = ["law", "law", "law", "math", "math", "math", "art", "art"]


def test_paired_delta_is_the_accuracy_difference():
    assert close(ex.paired_delta(CANDIDATE, BASELINE), sum(CANDIDATE) / 8 - sum(BASELINE) / 8)


def test_paired_standard_error_by_hand():
    diffs = [0, 1, 0, 0, -1, 1, 0, 0]
    mean = sum(diffs) / 8
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 7)
    assert close(ex.paired_standard_error(CANDIDATE, BASELINE), sd / math.sqrt(8))


def test_independent_standard_error_by_hand():
    # candidate 5/8 right, baseline 4/8: two binomial errors added in quadrature
    p_c, p_b = 5 / 8, 4 / 8
    expected = math.sqrt(p_c * (1 - p_c) / 8 + p_b * (1 - p_b) / 8)
    assert close(ex.independent_standard_error(CANDIDATE, BASELINE), expected)
    assert "same length" in error_message(ex.independent_standard_error, [1, 0], [1, 0, 1])


def test_clustered_standard_error_by_hand():
    # diffs by subject: law [0, 1, 0], math [0, -1, 1], art [0, 0]; delta = 1/8
    d = 1 / 8
    sums = [1 - 3 * d, 0 - 3 * d, 0 - 2 * d]
    assert close(ex.clustered_standard_error(CANDIDATE, BASELINE, SUBJECTS), math.sqrt(sum(s * s for s in sums)) / 8)


def test_clustering_widens_the_error_when_subjects_move_together():
    candidate = [1] * 10 + [0] * 10 + [1, 0] * 5
    baseline = [0] * 10 + [1] * 10 + [1, 0] * 5
    subjects = ["a"] * 10 + ["b"] * 10 + ["c"] * 10
    assert ex.clustered_standard_error(candidate, baseline, subjects) > ex.paired_standard_error(candidate, baseline)


def test_subject_deltas_sorted_smallest_first():
    rows = ex.subject_deltas(CANDIDATE, BASELINE, SUBJECTS)
    assert [r["subject"] for r in rows] == ["art", "math", "law"]
    assert rows[2] == {"subject": "law", "n": 3, "delta": 1 / 3}


def test_gate_verdict():
    quiet = ex.gate_verdict(CANDIDATE, BASELINE, SUBJECTS)
    # 8 questions: a band of ±50 points or more cannot say ship
    assert quiet["verdict"] == "too little data" and quiet["band"] > ex.DECISIVE_BAND
    assert close(quiet["delta"], 1 / 8)
    assert quiet["questions_needed"] == math.ceil(8 * (quiet["band"] / ex.TARGET_BAND) ** 2 - 1e-9)
    loud = ex.gate_verdict([1] * 8, [0] * 8, SUBJECTS)
    assert loud["verdict"] == "investigate" and loud["clustered_se"] == 0.0 and loud["p_value"] == 0.0
    assert ex.gate_verdict(CANDIDATE, BASELINE, SUBJECTS, multiple=0.1)["verdict"] == "investigate"


def test_gate_verdict_uses_cr1_the_paired_floor_and_students_t():
    gate = ex.gate_verdict(CANDIDATE, BASELINE, SUBJECTS)
    assert gate["subjects"] == 3 and gate["df"] == 2 and gate["few_subjects"]
    assert close(gate["clustered_se"], ex.clustered_standard_error(CANDIDATE, BASELINE, SUBJECTS))
    assert close(gate["clustered_se_cr1"], gate["clustered_se"] * math.sqrt(3 / 2))
    assert gate["gate_se"] == max(gate["clustered_se_cr1"], gate["paired_se"])
    # Student's t with 2 degrees of freedom at the normal curve's 2 standard errors: 4.53, not 2
    assert close(gate["critical"], ex.student_t_quantile(NormalDist().cdf(2.0), 2), 1e-12)
    assert round(gate["critical"], 2) == 4.53
    assert close(gate["band"], gate["critical"] * gate["gate_se"])
    assert close(gate["p_value"], 2 * ex.student_t_cdf(-abs(gate["delta"]) / gate["gate_se"], 2), 1e-12)


def test_three_subjects_that_moved_alike_gate_on_the_paired_error():
    # 3 subjects x 25 questions, each down by exactly one question (4 points): CR0 is exactly 0
    candidate = ([1] * 12 + [0] * 13) * 3
    baseline = ([1] * 13 + [0] * 12) * 3
    subjects = ["a"] * 25 + ["b"] * 25 + ["c"] * 25
    gate = ex.gate_verdict(candidate, baseline, subjects)
    assert gate["clustered_se"] == 0.0 and gate["clustered_se_cr1"] == 0.0
    assert gate["gate_se_basis"] == "paired" and gate["gate_se"] == gate["paired_se"] > 0
    assert gate["few_subjects"] and gate["verdict"] == "too little data"  # 75 questions: a band of ±9.9 points


def test_many_subjects_are_not_few():
    subjects = [f"s{j}" for j in range(ex.FEW_SUBJECTS) for _ in range(2)]
    candidate, baseline = [1, 0] * ex.FEW_SUBJECTS, [0, 0] * ex.FEW_SUBJECTS
    assert not ex.gate_verdict(candidate, baseline, subjects)["few_subjects"]
    assert ex.gate_verdict(candidate[2:], baseline[2:], subjects[2:])["few_subjects"]


def test_clustered_standard_error_cr1_by_hand():
    cr0 = ex.clustered_standard_error(CANDIDATE, BASELINE, SUBJECTS)
    assert close(ex.clustered_standard_error(CANDIDATE, BASELINE, SUBJECTS, correction="CR1"), cr0 * math.sqrt(3 / 2))
    assert "correction" in error_message(ex.clustered_standard_error, CANDIDATE, BASELINE, SUBJECTS, correction="CR2")


def test_student_t_closed_forms():
    # df 1 is the Cauchy distribution; df 2 has t = (2q − 1) / √(2q(1 − q))
    for q in (0.001, 0.1, 0.3, 0.5, 0.8, 0.975, 0.9999):
        assert close(ex.student_t_quantile(q, 1), math.tan(math.pi * (q - 0.5)), 1e-12)
        assert close(ex.student_t_quantile(q, 2), (2 * q - 1) / math.sqrt(2 * q * (1 - q)), 1e-12)
    for x in (-30.0, -1.0, 0.0, 0.5, 4.0):
        assert close(ex.student_t_cdf(x, 1), 0.5 + math.atan(x) / math.pi, 1e-13)
        assert close(ex.student_t_cdf(x, 2), 0.5 + x / (2 * math.sqrt(2 + x * x)), 1e-13)
    assert round(ex.student_t_quantile(0.975, 2), 3) == 4.303
    # many degrees of freedom: the normal curve
    assert close(ex.student_t_quantile(0.975, 100_000), ex.normal_quantile(0.975), 1e-4)
    assert "df" in error_message(ex.student_t_quantile, 0.9, 0.5)
    assert "df" in error_message(ex.student_t_cdf, 1.0, 100_001)
    assert "q " in error_message(ex.student_t_quantile, 1.0, 3)
    # the documented far end (MIN_T_QUANTILE_Q) is finite with df 1; a schema-violating q past it is refused,
    # whatever df (it was a 200 with df 2 and the "beyond the largest number" 400 with df 1)
    assert close(ex.student_t_quantile(1e-300, 1), -1 / (math.pi * 1e-300), 1e-9)
    for df in (1, 2):
        assert "q must be from 1e-300" in error_message(ex.student_t_quantile, 5e-324, df)


def test_release_gate_errors():
    assert "same length" in error_message(ex.paired_delta, [1, 0], [1, 0, 1])
    assert "candidate" in error_message(ex.paired_standard_error, [1], [0])
    assert "clusters" in error_message(ex.clustered_standard_error, [1, 0], [0, 0], ["a"])
    assert "2 different" in error_message(ex.clustered_standard_error, [1, 0], [0, 0], ["a", "a"])
    assert "multiple" in error_message(ex.gate_verdict, [1, 0], [0, 0], ["a", "b"], multiple=0)
    assert "multiple" in error_message(ex.gate_verdict, [1, 0], [0, 0], ["a", "b"], multiple=11)
    assert "baseline[0]" in error_message(ex.paired_delta, [1, 0], [2, 0])


# --- the benchmarks lesson --------------------------------------------------------------------

def test_option_logprob_sum_and_average():
    assert close(ex.option_logprob([-1.0, -2.0, -3.0]), -6.0)
    assert close(ex.option_logprob([-1.0, -2.0, -3.0], normalize="per_token"), -2.0)
    assert "token_logprobs[1]" in error_message(ex.option_logprob, [-1.0, 0.5])
    assert "normalize" in error_message(ex.option_logprob, [-1.0], normalize="per_char")


def test_pick_option_prefers_short_options_unless_normalised():
    options = {"A": [-1.5], "B": [-0.5, -0.5, -0.6, -0.4]}
    assert ex.pick_option(options) == "A"
    assert ex.pick_option(options, normalize="per_token") == "B"
    assert "options" in error_message(ex.pick_option, {})


def test_expected_score_has_the_chance_floor():
    assert ex.expected_score(0.0) == 0.25
    assert ex.expected_score(1.0) == 1.0
    assert close(ex.expected_score(0.5), 0.625)
    assert close(ex.expected_score(0.0, options=10), 0.1)
    assert "known" in error_message(ex.expected_score, 1.1)


def test_ngram_overlap():
    question = "How many chromosomes do all human somatic cells contain?"
    assert ex.ngram_overlap(question, "Trivia: how many chromosomes do ALL human somatic cells contain? 46.", n=5) == 1.0
    assert ex.ngram_overlap(question, "Nothing to see here at all, really, nothing.", n=5) == 0.0
    half = ex.ngram_overlap("a b c d", "a b c x", n=2)
    assert close(half, 2 / 3)
    assert "n must be at most" in error_message(ex.ngram_overlap, "too short", "x", n=8)
    assert "reference" in error_message(ex.ngram_overlap, "a b", None, n=1)


def test_simulate_contamination_is_reproducible_and_near_expected():
    run = ex.simulate_contamination(0.4, 0.25, questions=20000, seed=7)
    assert run == ex.simulate_contamination(0.4, 0.25, questions=20000, seed=7)
    assert close(run["expected"], 0.55)
    assert abs(run["measured"] - run["expected"]) < 0.02
    assert close(run["inflation"], run["measured"] - 0.4)
    assert 4000 < run["leaked"] < 6000


def test_simulate_contamination_with_nothing_leaked():
    run = ex.simulate_contamination(1.0, 0.0, questions=50)
    assert run == {"expected": 1.0, "measured": 1.0, "inflation": 0.0, "leaked": 0}
    assert "questions" in error_message(ex.simulate_contamination, 0.5, 0.1, questions=10**7)
    assert "leaked_fraction" in error_message(ex.simulate_contamination, 0.5, -0.1)


def test_simulate_contamination_fixed_seed_gives_fixed_figures():
    # The same seed must give the same run in CPython and in Pyodide: the browser test and the
    # Pyodide run of this file both rely on it.
    assert ex.simulate_contamination(0.5, 0.2, questions=1000, seed=0)["leaked"] == 190


# --- the public registry ---------------------------------------------------------------------

def test_every_public_function_has_a_docstring_and_is_exported():
    for name, fn in ex.PUBLIC.items():
        assert fn.__doc__ and len(fn.__doc__.strip()) > 20, name
        assert getattr(ex, name) is fn, name
    core = """standard_error confidence_interval chance_band is_distinguishable_from_chance accuracy predict
        softmax weighted_accuracy plain_mean average_confidence calibration_gap rms_calibration_error
        confidence_accuracy_correlation paired_delta paired_standard_error clustered_standard_error
        gate_verdict student_t_quantile student_t_cdf option_logprob pick_option expected_score ngram_overlap
        simulate_contamination""".split()
    assert set(core) <= set(ex.PUBLIC)


def test_call_public_names_missing_and_unknown_arguments():
    assert close(ex.call_public("standard_error", {"p": 0.25, "n": 100}), 0.0433, 1e-3)
    assert "'n'" in error_message(ex.call_public, "standard_error", {"p": 0.25})
    assert "'q'" in error_message(ex.call_public, "standard_error", {"p": 0.25, "n": 10, "q": 1})
    try:
        ex.call_public("__import__", {})
    except ex.UnknownFunction as error:
        assert "__import__" in str(error)
    else:
        raise AssertionError("a non-public name was callable")


def test_sums_are_correctly_rounded_so_server_and_browser_agree_to_the_last_bit():
    # CPython 3.11 (server) adds floats left to right; Pyodide's Python 3.12+ compensates
    # rounding in sum(), so the two could differ in the last bit, and a value near a rounding
    # boundary, such as UnifiedQA's plain mean over Table 1's groups (49.25 %), would print
    # differently. math.fsum is correctly rounded in both.
    groups = [0.456, 0.566, 0.402, 0.546]
    assert ex.plain_mean(groups) == math.fsum(groups) / 4
    assert ex.weighted_accuracy([1, 1, 1, 1], groups) == math.fsum(groups) / 4
    assert f"{100 * ex.plain_mean(groups):.1f}" == f"{100 * (math.fsum(groups) / 4):.1f}"


def test_numbers_too_large_to_add_up_are_refused_in_words():
    # Found by the schema-driven fuzzer: math.fsum overflows on values near the float limit.
    for values in ([1e308, 1e308], [10**400], [-1e16]):
        assert "at most" in error_message(ex.plain_mean, values), values


def test_question_flips_counts_each_kind_and_nets_to_the_paired_delta():
    from explainers.flips import question_flips

    baseline = [1, 1, 0, 0, 0, 1, 0]
    candidate = [0, 1, 1, 0, 0, 0, 1]
    before = ["A", "B", "C", "D", None, "A", "B"]
    after = ["C", "B", "A", "D", "A", "B", "D"]
    subjects = ["law", "law", "law", "art", "art", "art", "art"]
    found = question_flips(baseline, candidate, before, after, subjects)
    assert found["kinds"] == ["right_to_wrong", None, "wrong_to_right", None, "other_wrong", "right_to_wrong",
                              "wrong_to_right"]
    assert (found["right_to_wrong"], found["wrong_to_right"], found["other_wrong"], found["net"]) == (2, 2, 1, 0)
    assert found["delta"] == ex.paired_delta(candidate, baseline) == 0
    for subject, tally in found["subjects"].items():
        rows = [i for i, s in enumerate(subjects) if s == subject]
        assert tally["delta"] == ex.paired_delta([candidate[i] for i in rows], [baseline[i] for i in rows])
    assert "one answer per question" in error_message(question_flips, baseline, candidate, before[:3], after, subjects)
    assert "0 or 1" in error_message(question_flips, [0.5] * 7, candidate, before, after, subjects)


def test_letter_lean_sets_the_favourite_letter_against_the_keys():
    from explainers.flips import letter_lean

    lean = letter_lean(["A", "A", "A", "B", None], ["A", "B", "C", "B", "D"])
    assert lean["favourite"] == "A" and lean["favourite_accuracy"] == 1 / 5
    assert lean["accuracy"] == 2 / 5 and lean["no_answer"] == 1 / 5
    assert lean["predicted"] == {"A": 3 / 5, "B": 1 / 5, "C": 0.0, "D": 0.0}
    assert lean["keys"] == {"A": 1 / 5, "B": 2 / 5, "C": 1 / 5, "D": 1 / 5}
    assert letter_lean(["B", "A"], ["A", "B"])["favourite"] == "A"  # a tie: the first letter
    assert "no letter at all" in error_message(letter_lean, [None, None], ["A", "B"])
