"""The live model's published runs (benchmarks/mmlu/runs/*.jsonl.gz) are complete and reproducible.

Each published file must hold every test question exactly once, from one method and one shot
count (a partial run is never published as if it were complete), and a random sample of its rows,
re-scored now with the batch command's scorer, must give the same prediction and every
probability within 1e-5 (a generative row: the same generated text, response and mark).
``MMLU_RUNS_DIR`` points the test at another folder of runs (``.jsonl``
or ``.jsonl.gz``), for example a run still in progress, which is then only re-scored.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from benchmarks.live_runs import PARAMETERS
from benchmarks.mmlu import prompt
from benchmarks.mmlu.server import published_runs
from benchmarks.mmlu.server.evaluate import MMLUTask
from benchmarks.server.evaluate import batches
from benchmarks.server.multiple_choice import answer_question, answer_questions
from benchmarks.server.runfile import read_rows
from livescoring.scorer import Scorer

PUBLISHED = Path(__file__).resolve().parents[2] / "benchmarks" / "mmlu" / "runs"
RUNS = Path(os.environ.get("MMLU_RUNS_DIR") or PUBLISHED)
FILES = sorted([*RUNS.glob("*.jsonl.gz"), *RUNS.glob("*.jsonl")]) if RUNS.is_dir() else []
SAMPLE = 6

pytestmark = [pytest.mark.model, pytest.mark.skipif(not FILES, reason=f"no runs in {RUNS}")]



@pytest.fixture(scope="module")
def scorer(loaded_model):
    return Scorer(loaded_model)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_published_run_is_complete(path, mmlu_data):
    if RUNS != PUBLISHED:
        pytest.skip("not a published folder: completeness is required only of published runs")
    rows = read_rows(path)
    keys = [(r["subject"], r["index"]) for r in rows]
    expected = {(s, q.index) for s in mmlu_data.subjects for q in mmlu_data.questions(s, "test")}
    assert len(keys) == len(set(keys)) and set(keys) == expected
    assert len({(r["method"], r["split"], r["model"]) for r in rows}) == 1


def rescore_generated(row: dict, mmlu_data, scorer) -> None:
    """A generative row written again by the batch command's path: the same text, the same reading."""
    task = MMLUTask(mmlu_data)
    doc = mmlu_data.question(row["subject"], row["split"], row["index"])
    [job] = batches(task, {doc.subject: [doc]}, row["shots"], row["method"], 1)
    [again] = answer_questions(scorer, job)
    assert again["generated"] == row["generated"], row
    assert task.read_generated(doc, again["generated"]) == {k: row[k] for k in ("response", "prediction", "correct")}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_sample_of_published_rows_rescores_the_same(path, mmlu_data, scorer):
    rows = read_rows(path)
    for row in random.Random(path.name).sample(rows, min(SAMPLE, len(rows))):
        if row["method"] == "generative":
            rescore_generated(row, mmlu_data, scorer)
            continue
        q = mmlu_data.question(row["subject"], row["split"], row["index"])
        again = answer_question(scorer, prompt_format=prompt, subject=q.subject, question=q.question, choices=q.choices,
                                shots=mmlu_data.questions(q.subject, "dev")[:row["shots"]], method=row["method"], key=q.answer)
        assert again["prediction"] == row["prediction"], row
        for letter, p in row["probabilities"].items():
            assert abs(again["probabilities"][letter] - p) <= 1e-5, (row, again["probabilities"])
        assert again["shots_used"] == row["shots"]


@pytest.mark.skipif(RUNS != PUBLISHED, reason="only the published runs are drawn by the widgets")
def test_the_widgets_draw_the_published_files(mmlu_data):
    """What the site serves (benchmarks/mmlu/server/published_runs.py) against a plain count of the files."""
    context = published_runs.widget_context(mmlu_data)
    runs = {(rows[0]["method"], rows[0]["shots"]): rows for rows in map(read_rows, FILES)}
    by_shots = {shots: rows for (method, shots), rows in runs.items() if method == "letter"}
    assert [run["shots"] for run in context["live_scores"]["runs"]] == sorted(by_shots)
    assert sorted((run["method"], run["shots"], run["correct"]) for run in context["live_pairs"]["runs"]) == sorted(
        (method, shots, sum(r["correct"] for r in rows)) for (method, shots), rows in runs.items())
    for run, calibration in zip(context["live_scores"]["runs"], context["live_calibration"]["runs"], strict=True):
        rows = by_shots[run["shots"]]
        assert run["correct"] == sum(r["correct"] for r in rows) and run["questions"] == len(rows) == 14042
        assert calibration["average_confidence"] == pytest.approx(sum(r["confidence"] for r in rows) / len(rows))
        for subject, (right, n) in run["subjects"].items():
            mine = [r["correct"] for r in rows if r["subject"] == subject]
            assert (right, n) == (sum(mine), len(mine))


def test_the_size_the_scaling_plot_states_is_the_models(scorer):
    model = scorer.loaded.model
    assert sum(p.numel() for p in model.parameters()) == PARAMETERS
