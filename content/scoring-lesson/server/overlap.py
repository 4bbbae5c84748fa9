"""``/scoring-lesson/overlap``: the scoring lesson's data checks (benchmarks/mmlu/server/data_checks.py)
on a page of their own.

GET shows the counted duplicates and shared rows of our MMLU files and a form; POST checks the
pasted text against every test question (n-gram overlap) and lists the closest. Bad input (no
text, too much text) is a 400 with the message on the page; nothing pasted is rendered unescaped.
"""
from __future__ import annotations

from flask import Blueprint, current_app, render_template, request

from benchmarks.mmlu.server.data_checks import MAX_PASTED, OVERLAP_N, overlap_with_test, split_counts
from engine.security import require_same_origin

bp = Blueprint("scoring_lesson_overlap", __name__)


@bp.route("/scoring-lesson/overlap", methods=["GET", "POST"])
def overlap_page():
    root = current_app.config["MMLU_DATA_DIR"]
    data = current_app.extensions["mmlu_data"]
    text, found, error, status = "", None, None, 200
    if request.method == "POST":
        require_same_origin()
        text = request.form.get("text", "")
        try:
            found = overlap_with_test(root, text)
        except ValueError as problem:
            error, status = str(problem), 400
    rows = [{**row, "question": data.question(row["subject"], "test", row["index"]).question} for row in found or []]
    return render_template("scoring-lesson/server/overlap-page.html", counts=split_counts(root), text=text,
                           found=rows if found is not None else None, error=error, n=OVERLAP_N,
                           max_pasted=MAX_PASTED), status
