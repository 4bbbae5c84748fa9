"""MMLU-Pro's server side: where its data lives, its reader for this app, its published run, its
routes and its commands.

Any document that shows MMLU-Pro questions calls :func:`init_app` from its hooks (idempotent): the
data folder is read from ``MMLU_PRO_DATA_DIR`` here, in one place, and the app's model service is
made. ``api.bp`` is its API (questions, scoring, generation), mounted by the site under a prefix.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from flask import Flask, current_app

from benchmarks.server import init_service
from benchmarks.server.runfile import read_rows
from engine.documents import Command

from ..data import LETTERS
from .reader import MMLUProData

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[4] / "shared/data/mmlu-pro"  # ../shared beside the checkout
RUNS_DIR = Path(__file__).resolve().parents[1] / "runs"
# The live model's run published with the page (runs/README.md says how it was made and what it covers).
LIVE_RUN = "smollm2-0shot-first100.jsonl.gz"
LIVE_RUN_SAMPLE = "the first 100 test questions of each category by question_id (1,400 of the 12,032)"
# ``python -m benchmarks mmlu_pro <command>`` (benchmarks/__main__.py); the MMLU-Pro document's hooks
# give the same commands their old name.
COMMANDS = {
    "evaluate": Command("benchmarks.mmlu_pro.server.evaluate",
                        "score real MMLU-Pro test questions with the live-scoring model; write JSONL"),
    "conformance": Command("benchmarks.mmlu_pro.server.conformance",
                           "check a model server against the published run: prediction agreement, max |dp|"),
}


def data_dir(config=None) -> Path:
    """Where the MMLU-Pro Parquet files live: MMLU_PRO_DATA_DIR. Read-only."""
    return Path((config or {}).get("MMLU_PRO_DATA_DIR") or os.environ.get("MMLU_PRO_DATA_DIR") or DEFAULT_DATA_DIR)


def init_app(app: Flask) -> MMLUProData:
    """This app's MMLU-Pro reader (made on the first call) and its model service."""
    if "mmlu_pro_data" not in app.extensions:
        app.config["MMLU_PRO_DATA_DIR"] = data_dir(app.config)
        app.extensions["mmlu_pro_data"] = MMLUProData(app.config["MMLU_PRO_DATA_DIR"])
        init_service(app)
    return app.extensions["mmlu_pro_data"]


def gate_groups() -> dict[str, str]:
    """Groups of categories for the release gate's knowledge shape: MMLU-Pro has none."""
    return {}


def dataset() -> MMLUProData:
    return current_app.extensions["mmlu_pro_data"]


@lru_cache(maxsize=1)
def live_run() -> dict | None:
    """The published run per category, {name: [right, questions, chance rate]}, with its model and
    shots; None when the file is not there (the widget then shows the paper's figures only)."""
    path = RUNS_DIR / LIVE_RUN
    if not path.is_file():
        return None
    rows = read_rows(path)
    categories: dict = {}
    for r in rows:
        right, n, chance = categories.get(r["category"], (0, 0, 0.0))
        categories[r["category"]] = (right + bool(r["correct"]), n + 1, chance + 1 / r["options"])
    return {"model": rows[0]["model"], "shots": rows[0]["shots"], "sample": LIVE_RUN_SAMPLE,
            "categories": {name: [right, n, chance / n] for name, (right, n, chance) in categories.items()}}


def published_answer(question) -> dict | None:
    """The published run's answer to one test question (a ``Question`` of the reader), as the question
    browser prints it in place of a live result: {"model", "shots", "prediction", "key", "correct",
    "confidence", "options": [{"letter", "choice", "probability"}]}; None for a question the run did
    not score (it covers the first 100 of each category) or when the file is not there."""
    row = _published_rows().get((question.category, question.index))
    if row is None or row["question_id"] != question.question_id:  # never another question's answer
        return None
    return {key: row[key] for key in ("model", "shots", "prediction", "key", "correct", "confidence")} | {
        "options": [{"letter": letter, "choice": choice, "probability": row["probabilities"][letter]}
                    for letter, choice in zip(LETTERS, question.options, strict=False)]}


@lru_cache(maxsize=1)
def _published_rows() -> dict[tuple[str, int], dict]:
    """published_answer's rows by (category, index): read once."""
    path = RUNS_DIR / LIVE_RUN
    return {(r["category"], r["index"]): r for r in read_rows(path)} if path.is_file() else {}
