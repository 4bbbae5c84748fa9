"""``python -m benchmarks mmlu conformance --server URL --run NAME``: score a sample of a published MMLU
run (benchmarks/mmlu/runs/) through a model server and print prediction agreement, the largest
letter-probability difference (max |dp|) and the wall time against the run; a server without
prompt log-probabilities is refused (exit 2). The command is the shared one
(benchmarks/server/conformance.py); this module gives it MMLU's task and runs.
"""
from __future__ import annotations

import argparse

from benchmarks.server import conformance as shared

from ..data import DataMissing
from .evaluate import MMLUTask
from .published_runs import RUNS_DIR


def add_arguments(parser: argparse.ArgumentParser) -> None:
    shared.add_arguments(parser, RUNS_DIR)


def run(args: argparse.Namespace) -> int:
    return shared.run(args, MMLUTask, RUNS_DIR, (DataMissing,))
