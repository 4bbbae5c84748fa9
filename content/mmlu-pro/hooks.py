"""The MMLU-Pro document's server side: the benchmark it scores, its widgets' data, its command.

``init_app`` sets up MMLU-Pro (benchmarks/mmlu_pro/server/), its API under ``/api/mmlu-pro`` and this
document's question browser (``/mmlu-pro/run``, server/run_page.py);
``widget_context`` gives category sizes and the live model's published run; the data folder
missing or unreadable (``DataMissing``) is a 503 that says what to do, while the rest of the site
keeps working. ``static_files``: the published run's answers for the static export, where the
question browser's page answers its sample's questions with them (engine/published_answers.py).
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


def static_files(app: Flask) -> dict[str, bytes]:
    """The published run's answers (the first 100 test questions of each category), by category, with
    their questions: {} without the run or the data."""
    from benchmarks.mmlu_pro.server import LIVE_RUN, LIVE_RUN_SAMPLE, RUNS_DIR
    from benchmarks.server.runfile import read_rows
    from engine import published_answers

    path = RUNS_DIR / LIVE_RUN
    data = app.extensions["mmlu_pro_data"]
    try:
        categories = {name: data.in_category(name) for name in data.categories}
    except DataMissing:
        return {}
    if not path.is_file():
        return {}
    rows = sorted(read_rows(path), key=lambda row: (row["category"], row["index"]))
    questions: dict[str, list[dict]] = {}
    for row in rows:
        asked = questions.setdefault(row["category"].replace(" ", "-"), [])
        question = categories[row["category"]][row["index"]]
        if row["index"] != len(asked) or row["question_id"] != question.question_id:
            raise ValueError(f"{path}: {row['category']} question {row['index']} is not the next of the "
                             f"category's first questions (question_id {row['question_id']})")
        asked.append({"question": question.question, "choices": list(question.options), "key": question.answer,
                      "answers": {LIVE_RUN.removesuffix(".jsonl.gz"): published_answers.answer(row)}})
    first = rows[0]
    return published_answers.files(
        [{"name": LIVE_RUN.removesuffix(".jsonl.gz"), "method": first["method"], "shots": first["shots"],
          "model": first["model"], "file": f"benchmarks/mmlu_pro/runs/{LIVE_RUN}"}],
        [{"name": name.replace(" ", "-"), "title": name, "questions": len(questions[name.replace(" ", "-")]),
          "total": len(asked)} for name, asked in categories.items() if name.replace(" ", "-") in questions],
        questions, covers=LIVE_RUN_SAMPLE, subject_word="Category")


HOOKS = DocumentHooks(
    init_app=init_app,
    widget_context=widget_context,
    static_files=static_files,
    # MMLU-Pro's own commands (python -m benchmarks mmlu_pro ...), under their old name through this document
    commands=mmlu_pro.COMMANDS,
    unavailable=(DataMissing,),
)
