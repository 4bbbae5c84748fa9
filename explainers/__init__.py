"""The statistics the annotated papers teach, in plain standard-library Python.

The same source runs on the server (to render first values into pages and behind the JSON API
/api/explainers/<function>) and in the reader's browser under Pyodide (to recompute as inputs
change). Scores are proportions between 0 and 1 unless a docstring says otherwise.
PUBLIC maps the names callable from the API and the browser to their functions.
"""
from __future__ import annotations

from .calibration import (
    average_confidence,
    calibration_bins,
    calibration_gap,
    confidence_accuracy_correlation,
    rms_calibration_error,
)
from .lesson import expected_score, ngram_overlap, option_logprob, pick_option, simulate_contamination
from .registry import PUBLIC, UnknownFunction, call_public
from .release_gate import (
    CORRECTIONS,
    DECISIVE_BAND,
    FEW_SUBJECTS,
    MAX_MULTIPLE,
    TARGET_BAND,
    clustered_standard_error,
    gate_verdict,
    independent_standard_error,
    paired_delta,
    paired_standard_error,
    subject_deltas,
)
from .rotation import original_letter, rotate_options, rotated_letter, rotation_metrics
from .scoring import (
    accuracy,
    group_accuracies,
    plain_mean,
    predict,
    softmax,
    subject_accuracies,
    top_two,
    weighted_accuracy,
)
from .stats import (
    binomial_cdf,
    chance_band,
    confidence_interval,
    is_distinguishable_from_chance,
    margin_of_error,
    normal_quantile,
    standard_error,
    student_t_cdf,
    student_t_quantile,
)

__version__ = "1.0.0"

__all__ = ["CORRECTIONS", "DECISIVE_BAND", "FEW_SUBJECTS", "MAX_MULTIPLE", "PUBLIC", "TARGET_BAND", "UnknownFunction",
           "call_public", *PUBLIC, "original_letter", "rotate_options", "rotated_letter", "rotation_metrics"]
