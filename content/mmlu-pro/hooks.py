"""The MMLU-Pro paper's server side: its Parquet dataset, its widgets' data, live scoring of its questions.

The engine calls these hooks (see engine/papers.py): ``init_app`` (the dataset, the model service and
the routes in routes.py) and ``widget_context`` (category sizes and the live model's published run,
for the widgets); ``COMMANDS`` are
``python -m engine mmlu-pro <command>``; ``UNAVAILABLE``
errors (the data folder missing or unreadable) become 503s that say what to do, while the rest of
the site keeps working.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from flask import Flask, current_app

from livescoring.results import read_rows

from ..dataset import DataMissing, MMLUProData
from ..figures import CATEGORY_SIZES

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[4] / "shared" / "data" / "mmlu-pro"  # ../shared beside the checkout
RUNS_DIR = Path(__file__).resolve().parents[1] / "runs"
# The live model's run published with the page (runs/README.md says how it was made and what it covers).
LIVE_RUN = "smollm2-0shot-first100.jsonl.gz"
LIVE_RUN_SAMPLE = "the first 100 test questions of each category by question_id (1,400 of the 12,032)"
UNAVAILABLE = (DataMissing,)
COMMANDS = {
    "evaluate": ("evaluate", "score real MMLU-Pro test questions with the live-scoring model; write JSONL"),
}


def data_dir(config) -> Path:
    """Where the MMLU-Pro Parquet files live: MMLU_PRO_DATA_DIR. Read-only."""
    return Path(config.get("MMLU_PRO_DATA_DIR") or os.environ.get("MMLU_PRO_DATA_DIR") or DEFAULT_DATA_DIR)


def dataset() -> MMLUProData:
    return current_app.extensions["mmlu_pro_data"]


def init_app(app: Flask, paper) -> None:
    import livescoring

    from . import routes

    app.config["MMLU_PRO_DATA_DIR"] = data_dir(app.config)
    app.extensions["mmlu_pro_data"] = MMLUProData(app.config["MMLU_PRO_DATA_DIR"])
    livescoring.init_app(app)
    app.register_blueprint(routes.bp)


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


def widget_context(app: Flask) -> dict:
    """Category sizes counted from the test file; without the files, the dataset card's table (the
    same counts), so the widgets still draw and the page stays up. The live model's published run."""
    try:
        sizes = app.extensions["mmlu_pro_data"].category_sizes("test")
        counted_from = "the test file"
    except DataMissing:
        sizes, counted_from = dict(CATEGORY_SIZES), "the dataset card (the files are not here)"
    run = live_run()
    return {"category_sizes": sizes, "sizes_from": counted_from, **({"live_run": run} if run else {})}
