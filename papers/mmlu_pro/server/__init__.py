"""The MMLU-Pro paper's server side: its Parquet dataset, its widgets' data, live scoring of its questions.

The engine calls these hooks (see engine/papers.py): ``init_app`` (the dataset, the model service and
the routes in routes.py) and ``widget_context`` (category sizes for the widgets); ``COMMANDS`` are
``python -m engine mmlu-pro <command>``; ``UNAVAILABLE``
errors (the data folder missing or unreadable) become 503s that say what to do, while the rest of
the site keeps working.
"""
from __future__ import annotations

import os
from pathlib import Path

from flask import Flask, current_app

from ..dataset import DataMissing, MMLUProData
from ..figures import CATEGORY_SIZES

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[4] / "shared" / "data" / "mmlu-pro"  # ../shared beside the checkout
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


def widget_context(app: Flask) -> dict:
    """Category sizes counted from the test file; without the files, the dataset card's table (the
    same counts), so the widgets still draw and the page stays up."""
    try:
        sizes = app.extensions["mmlu_pro_data"].category_sizes("test")
        counted_from = "the test file"
    except DataMissing:
        sizes, counted_from = dict(CATEGORY_SIZES), "the dataset card (the files are not here)"
    return {"category_sizes": sizes, "sizes_from": counted_from}
