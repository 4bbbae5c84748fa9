"""``python -m benchmarks mmlu_pro evaluate``: score real MMLU-Pro test questions with the live model.

The command is the shared one (benchmarks/server/evaluate.py: packed batches, ``--workers``,
``--resume``, atomic saves, gzip when ``--out`` ends ``.gz``, the summary); this module is
MMLU-Pro's task: its 14 categories, its test split, the category's worked examples from the
validation split, this paper's letter prompt, up to ten options. Writes one JSON line per question
(the schema in benchmarks/runfile.py, with MMLU-Pro's ``question_id`` and ``options``) and prints
the overall accuracy and each category's, with Wilson 95 % intervals, the chance rate of the mix,
the macro accuracy and the RMS calibration error, all from ``explainers``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.server import evaluate_command as command
from benchmarks.server.evaluate import Task

from ..data import DataMissing
from ..task import TASK
from . import data_dir
from .reader import MMLUProData


class MMLUProTask(Task):
    """MMLU-Pro: test questions by category; worked examples from the category's validation split."""

    spec = TASK
    default_out = Path("mmlu-pro-results.jsonl")
    create_folder = True

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--categories", nargs="+", default=["all"], metavar="CATEGORY",
                            help="category names (computer-science for 'computer science'), or 'all'")

    @classmethod
    def open(cls, config, args: argparse.Namespace) -> MMLUProTask:
        return cls(MMLUProData(data_dir(config)))

    def groups(self, names: list[str]) -> list[str]:
        return chosen_categories(names, self.data)

    def row_fields(self, doc, split: str) -> tuple[dict, dict]:
        return ({"question_id": doc.question_id, "category": doc.category, "split": split, "index": doc.index},
                {"options": len(doc.options)})


def chosen_categories(names: list[str], data: MMLUProData) -> list[str]:
    if names == ["all"]:
        return list(data.categories)
    wanted = [name.replace("-", " ") for name in names]
    unknown = [name for name in wanted if name not in data.categories]
    if unknown:
        raise ValueError(f"unknown categor{'y' if len(unknown) == 1 else 'ies'}: {', '.join(unknown)}; "
                         f"use {', '.join(data.categories)}")
    return wanted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    command.add_arguments(parser, MMLUProTask)


def run(args: argparse.Namespace) -> int:
    return command.run(args, MMLUProTask, (DataMissing,))
