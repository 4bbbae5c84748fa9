"""The scoring lesson's server side: its widgets' data (the stored example runs, MMLU's subject
groups) and its command ``python -m engine scoring-lesson gate``.

Hooks the engine calls (see engine/papers.py): ``widget_context`` and ``COMMANDS``. The MMLU
files are read from ``MMLU_DATA_DIR``, as the MMLU paper reads them; without them the gate still
works, only without subject groups (so without the knowledge-regression shape).
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from flask import Flask

from ..runs import pair_runs, read_run

RUNS_DIR = Path(__file__).resolve().parents[1] / "runs"
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[4] / "shared" / "data" / "mmlu"  # ../shared beside the checkout
# The page's real example: the live model's 0-shot run (production) against its 5-shot run
# (candidate); runs/README.md says what they cover. Full runs in the same format can replace them.
EXAMPLE_RUNS = ("smollm2-0shot.jsonl", "smollm2-5shot.jsonl")
COMMANDS = {"gate": ("gate", "compare two runs (evaluate JSONL or harness sample logs): paired delta, "
                             "clustered standard error, verdict and shape")}


def mmlu_data_dir(config=None) -> Path:
    """Where the MMLU CSVs live: MMLU_DATA_DIR (the same setting the MMLU paper reads). Read-only."""
    return Path((config or {}).get("MMLU_DATA_DIR") or os.environ.get("MMLU_DATA_DIR") or DEFAULT_DATA_DIR)


@lru_cache(maxsize=1)
def example_pair() -> dict:
    """The stored example runs, paired question by question."""
    production, candidate = (read_run([(name, (RUNS_DIR / name).read_text(encoding="utf-8"))])
                             for name in EXAMPLE_RUNS)
    return pair_runs(production, candidate)


def widget_context(app: Flask) -> dict:
    from .gate import subject_groups

    return {"example": example_pair(), "subject_groups": subject_groups(mmlu_data_dir(app.config))}
