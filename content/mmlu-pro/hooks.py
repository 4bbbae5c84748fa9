"""The MMLU-Pro document's server side: the benchmark it scores, its widgets' data, its command.

``init_app`` sets up MMLU-Pro (benchmarks/mmlu_pro/server/), its API under ``/api/mmlu-pro`` and this
document's question browser (``/mmlu-pro/run``, server/run_page.py);
``widget_context`` gives category sizes and the live model's published run; the data folder
missing or unreadable (``DataMissing``) is a 503 that says what to do, while the rest of the site
keeps working.
"""
from __future__ import annotations

from flask import Flask

from benchmarks.mmlu_pro import server as mmlu_pro
from benchmarks.mmlu_pro.data import DataMissing
from engine.documents import DocumentHooks

from .figures import CATEGORY_SIZES


def init_app(app: Flask, document) -> None:
    from benchmarks.mmlu_pro.server import api

    from .server import run_page

    mmlu_pro.init_app(app)
    app.register_blueprint(api.bp, url_prefix="/api/mmlu-pro")
    app.register_blueprint(run_page.bp)


def widget_context(app: Flask) -> dict:
    """Category sizes counted from the test file; without the files, the dataset card's table (the
    same counts), so the widgets still draw and the page stays up. The live model's published run."""
    try:
        sizes = app.extensions["mmlu_pro_data"].category_sizes("test")
        counted_from = "the test file"
    except DataMissing:
        sizes, counted_from = dict(CATEGORY_SIZES), "the dataset card (the files are not here)"
    run = mmlu_pro.live_run()
    return {"category_sizes": sizes, "sizes_from": counted_from, **({"live_run": run} if run else {})}


HOOKS = DocumentHooks(
    init_app=init_app,
    widget_context=widget_context,
    # MMLU-Pro's own commands (python -m benchmarks mmlu_pro ...), under their old name through this document
    commands=mmlu_pro.COMMANDS,
    unavailable=(DataMissing,),
)
