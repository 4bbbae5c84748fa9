"""Two-run gate: the release gate on two runs (the live model's published ones, the four shapes'
examples, or files a reader loads).

The gate every document shares (``benchmarks.gate_widget``). The reader's files are parsed there,
by the same ``runs`` module the command line uses, so the browser and ``python -m benchmarks
gate`` read a file the same way and fail on the same line with the same message.
"""
from __future__ import annotations

from benchmarks.gate_examples import PUBLISHED, GateExamples
from benchmarks.gate_widget import band_label, gate_widget, loaded_runs
from benchmarks.mmlu.subject_table import SUBJECT_GROUPS
from benchmarks.mmlu_pro.data import CATEGORIES

__all__ = ["WIDGET", "band_label", "loaded_runs"]

WIDGET = gate_widget(
    "two-run-gate", "The release gate on two runs",
    "Bring two runs (or choose an example): paired delta, clustered error bar, verdict and shape.",
    GateExamples("mmlu", len(SUBJECT_GROUPS), holdout="mmlu_pro", holdout_groups=CATEGORIES),
    default=PUBLISHED, height=1000,
)
