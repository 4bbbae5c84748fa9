"""MMLU's published runs, as the widgets read them: the shared reader (benchmarks/live_runs.py, the
same for every benchmark's runs), by the name MMLU's documents and server side import it."""
from __future__ import annotations

from ..live_runs import (
    GENERATIVE,
    LETTER,
    MAX_BINS,
    PARAMETERS,
    live_calibration,
    live_pairs,
    live_scores,
    model_name,
    paired_marks,
    run_choices,
    run_key,
    run_of,
    run_pair,
)

__all__ = ["GENERATIVE", "LETTER", "MAX_BINS", "PARAMETERS", "live_calibration", "live_pairs", "live_scores",
           "model_name", "paired_marks", "run_choices", "run_key", "run_of", "run_pair"]
