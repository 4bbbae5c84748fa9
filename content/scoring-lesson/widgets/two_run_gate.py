"""Two-run gate: the release gate on two runs (the live model's published ones, the four shapes'
examples, or files a reader loads).

The gate every document shares (``benchmarks.gate_widget``). The reader's files are parsed there,
by the same ``runs`` module the command line uses, so the browser and ``python -m engine
scoring-lesson gate`` read a file the same way and fail on the same line with the same message.
"""
from __future__ import annotations

from benchmarks.gate_widget import PUBLISHED, band_label, gate_widget, loaded_runs

__all__ = ["WIDGET", "band_label", "loaded_runs"]

WIDGET = gate_widget(
    "two-run-gate", "The release gate on two runs",
    "Bring two runs (or choose an example): paired delta, clustered error bar, verdict and shape.",
    default=PUBLISHED, height=1000,
)
