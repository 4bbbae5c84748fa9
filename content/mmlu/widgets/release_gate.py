"""Release gate: is a candidate's score change against production real, or noise?

The gate every document shares (``benchmarks.gate_widget``): a simulation of a whole MMLU test
run of two models, the live model's published runs, one example of each dashboard shape, and a
reader's own runs (pasted, this site's JSONL or the harness's sample files). It investigates when
the paired delta is beyond the gate's band, two standard errors clustered by subject widened by
Student's t (with the few-subjects rule under 20 subjects; see ``explainers.gate_verdict``).
"""
from __future__ import annotations

from benchmarks.gate_examples import SIMULATED, GateExamples, simulate_pair
from benchmarks.gate_widget import gate_widget
from benchmarks.mmlu.subject_table import SUBJECT_GROUPS
from benchmarks.mmlu_pro.data import CATEGORIES

__all__ = ["WIDGET", "simulate_pair"]

WIDGET = gate_widget(
    "release-gate", "Release gate: is a score change real?",
    "A candidate against production, question by question, with a standard error clustered by subject.",
    GateExamples("mmlu", len(SUBJECT_GROUPS), holdout="mmlu_pro", holdout_groups=CATEGORIES),
    default=SIMULATED, height=1000,
)
