"""The scoring lesson's server side: the benchmark it scores (MMLU), its widgets' data, its command.

``init_app`` sets up MMLU (benchmarks/mmlu/server/: its data from ``MMLU_DATA_DIR`` and the model
service) and the lesson's routes: the data-checks page (``/scoring-lesson/overlap``) and the
three-scorers widget's old address (server/). ``live_widget`` and ``live_widget_form`` draw the
three-scorers widget (server/three_scorers.py). Without the MMLU files the gate still works, only
without subject groups (so without the knowledge-regression shape).
"""
from __future__ import annotations

from flask import Flask

from benchmarks import server as benchmarks_server
from benchmarks.mmlu import server as mmlu
from benchmarks.mmlu.data import DataMissing
from benchmarks.mmlu.figures import paper_figures
from benchmarks.mmlu.server import published_runs, rotation_runs
from engine.documents import DocumentHooks


def init_app(app: Flask, document) -> None:
    from .server import overlap, three_scorers

    mmlu.init_app(app)
    app.register_blueprint(overlap.bp)
    app.register_blueprint(three_scorers.bp)


def live_widget(widget, mode: str) -> dict:
    """The three-scorers widget's form (the lesson's one live widget), as the model is now."""
    from .server.three_scorers import widget_variables

    return widget_variables(mode)


def live_widget_form(widget, mode: str, whole_page):
    """The three-scorers widget's answer to its posted form: the whole page, or the results alone."""
    from .server.three_scorers import form_answer

    return form_answer(mode, whole_page)


def widget_context(app: Flask) -> dict:
    """Table 1, MMLU's group sizes and subject groups, and the live model's published runs
    (benchmarks/mmlu/runs/): per subject, question by question for the gate's example, and every
    answer with its question's text for the flips view; and its rotation checks
    (benchmarks/mmlu/runs/rotations/)."""
    data = app.extensions["mmlu_data"]
    try:
        group_sizes = data.group_sizes("test")
    except DataMissing:
        group_sizes, data = {}, None
    table = [{key: row[key] for key in ("model", "humanities", "social_sciences", "stem", "other", "average")}
             for row in paper_figures()["table_1"]["rows"]]
    runs = published_runs.widget_context(data)
    answers = published_runs.PublishedAnswers(data)
    test_sizes = {name: s.sizes["test"] for name, s in data.subjects.items()} if data is not None else None
    return {**rotation_runs.widget_context(test_sizes), "published_answers": answers, "published_runs": answers.runs,
            "live_pairs": runs.get("live_pairs"), "live_scores": runs.get("live_scores"),
            "subject_groups": mmlu.subject_groups(app.config["MMLU_DATA_DIR"]), "table_1": table,
            "group_sizes": group_sizes}


HOOKS = DocumentHooks(
    init_app=init_app,
    widget_context=widget_context,
    live_widget=live_widget,
    live_widget_form=live_widget_form,
    # The gate on runs of any benchmark (python -m benchmarks gate), under its old name through the lesson
    commands={"gate": benchmarks_server.COMMANDS["gate"]},
)
