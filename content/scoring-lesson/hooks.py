"""The scoring lesson's server side: its widgets' data (the live model's published MMLU runs,
MMLU's subject groups) and its command ``python -m engine scoring-lesson gate``.

Hooks the engine calls (see engine/papers.py): ``init_app`` (the data-checks page,
``/scoring-lesson/overlap``, and the three-scorers widget's old address), ``widget_context``,
``live_widget`` and ``live_widget_form`` (the three-scorers widget, live: it scores through the MMLU
paper's live-scoring service; see three_scorers.py) and ``COMMANDS``. The
MMLU files are read from ``MMLU_DATA_DIR``, as the MMLU paper reads them; without them the gate
still works, only without subject groups (so without the knowledge-regression shape).
"""
from __future__ import annotations

import os
from pathlib import Path

from flask import Flask

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[4] / "shared" / "data" / "mmlu"  # ../shared beside the checkout
COMMANDS = {"gate": ("gate", "compare two runs (evaluate JSONL or harness sample logs): paired delta, "
                             "clustered standard error, verdict and shape")}


def mmlu_data_dir(config=None) -> Path:
    """Where the MMLU CSVs live: MMLU_DATA_DIR (the same setting the MMLU paper reads). Read-only."""
    return Path((config or {}).get("MMLU_DATA_DIR") or os.environ.get("MMLU_DATA_DIR") or DEFAULT_DATA_DIR)


def init_app(app: Flask, paper) -> None:
    from papers.mmlu.dataset import MMLUData

    from . import overlap, three_scorers

    app.config["SCORING_LESSON_MMLU_DIR"] = mmlu_data_dir(app.config)
    app.extensions["scoring_lesson_mmlu"] = MMLUData(app.config["SCORING_LESSON_MMLU_DIR"])
    app.register_blueprint(overlap.bp)
    app.register_blueprint(three_scorers.bp)


def live_widget(widget, mode: str) -> dict:
    """The three-scorers widget's form (the lesson's one live widget), as the model is now."""
    from .three_scorers import widget_variables

    return widget_variables(mode)


def live_widget_form(widget, mode: str) -> tuple[dict, int, dict]:
    """The three-scorers widget with the posted question scored (or the reason it was not)."""
    from .three_scorers import form_answer

    return form_answer(mode)


def widget_context(app: Flask) -> dict:
    """Table 1, MMLU's group sizes and subject groups, and the live model's published runs (made by
    the MMLU paper: papers/mmlu/runs/): per subject, and question by question for the gate's example."""
    from papers.mmlu.dataset import DataMissing, MMLUData
    from papers.mmlu.figures import paper_figures
    from papers.mmlu.server import published_runs

    from .gate import subject_groups

    root = app.config.get("SCORING_LESSON_MMLU_DIR") or mmlu_data_dir(app.config)
    data = MMLUData(root)
    try:
        group_sizes = data.group_sizes("test")
    except DataMissing:
        group_sizes, data = {}, None
    table = [{key: row[key] for key in ("model", "humanities", "social_sciences", "stem", "other", "average")}
             for row in paper_figures()["table_1"]["rows"]]
    runs = published_runs.widget_context(data)
    return {"example": runs.get("live_pairs"), "live_scores": runs.get("live_scores"),
            "subject_groups": subject_groups(root), "table_1": table, "group_sizes": group_sizes}
