"""MMLU's server side: where its data lives, its reader for this app, its routes and its commands.

Any document that shows MMLU questions calls :func:`init_app` from its hooks (it is idempotent): the
data folder is read from ``MMLU_DATA_DIR`` in one place, here, and the app's model service is made.
Its API is a blueprint a document registers: ``api.bp`` (``/api/score``, ``/api/questions``); the
pages that use it (a "Run it yourself" form, a lesson's scorers) are the documents' own.
"""
from __future__ import annotations

import os
from pathlib import Path

from flask import Flask, current_app

from benchmarks.server import init_service
from engine.documents import Command

from ..data import DataMissing
from .reader import MMLUData

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[4] / "shared" / "data" / "mmlu"  # ../shared beside the checkout
# ``python -m benchmarks mmlu <command>`` (benchmarks/__main__.py); the MMLU document's hooks give the
# same commands their old name, ``python -m engine mmlu <command>``.
COMMANDS = {
    "download": Command("benchmarks.mmlu.server.download", "fetch the official MMLU release into MMLU_DATA_DIR"),
    "evaluate": Command("benchmarks.mmlu.server.evaluate",
                        "score real MMLU questions with the live-scoring model; write JSONL"),
    "conformance": Command("benchmarks.mmlu.server.conformance",
                           "check a model server against a published run: prediction agreement, max |dp|"),
}


def data_dir(config=None) -> Path:
    """Where the real MMLU CSVs live (dev/, val/, test/, subjects.csv): MMLU_DATA_DIR. Read-only."""
    return Path((config or {}).get("MMLU_DATA_DIR") or os.environ.get("MMLU_DATA_DIR") or DEFAULT_DATA_DIR)


def init_app(app: Flask) -> MMLUData:
    """This app's MMLU reader (made on the first call) and its model service."""
    if "mmlu_data" not in app.extensions:
        app.config["MMLU_DATA_DIR"] = data_dir(app.config)
        app.extensions["mmlu_data"] = MMLUData(app.config["MMLU_DATA_DIR"])
        init_service(app)
    return app.extensions["mmlu_data"]


def subject_groups(root: Path) -> dict[str, str]:
    """MMLU's subject → group, from subjects.csv; empty when the data is absent."""
    try:
        return {name: s.group for name, s in MMLUData(root).subjects.items()}
    except DataMissing:
        return {}


def gate_groups() -> dict[str, str]:
    """Subject → group for the release gate's knowledge shape (benchmarks/server/gate_command.py),
    from MMLU_DATA_DIR; empty when the data is absent."""
    return subject_groups(data_dir(None))


def dataset() -> MMLUData:
    return current_app.extensions["mmlu_data"]
