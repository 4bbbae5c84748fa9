"""The live model's published MMLU-Pro run (benchmarks/mmlu_pro/runs/) is complete and reproducible.

The category-bars widget draws this run, and the server describes it as the first 100 test
questions of each category by question_id (``LIVE_RUN_SAMPLE``): the file must hold exactly that
set, every question once, from one model and one shot count, with the counts the widget is given.
A random sample of its rows, re-scored now with the batch command's scorer, must give the same
prediction and every probability within 1e-5.
"""
from __future__ import annotations

import random

import pytest

from benchmarks.mmlu_pro import prompt
from benchmarks.mmlu_pro.server import LIVE_RUN, LIVE_RUN_SAMPLE, RUNS_DIR, data_dir, live_run
from benchmarks.mmlu_pro.server.reader import MMLUProData
from benchmarks.server.multiple_choice import answer_question
from benchmarks.server.runfile import read_rows
from engine.config import default_config
from livescoring.scorer import Scorer

PER_CATEGORY = 100
SAMPLE = 6
PATH = RUNS_DIR / LIVE_RUN

pytestmark = [pytest.mark.model, pytest.mark.skipif(not PATH.is_file(), reason=f"{PATH} is not there")]


@pytest.fixture(scope="module")
def data():
    return MMLUProData(data_dir(default_config()))


@pytest.fixture(scope="module")
def rows():
    return read_rows(PATH)


@pytest.fixture(scope="module")
def scorer(loaded_model):
    return Scorer(loaded_model)


def test_the_published_run_holds_the_stated_sample_once_each(rows, data):
    assert f"first {PER_CATEGORY} test questions of each category by question_id" in LIVE_RUN_SAMPLE
    in_category = {c: data.in_category(c) for c in data.categories}
    expected = {(c, q.index, q.question_id) for c, questions in in_category.items() for q in questions[:PER_CATEGORY]}
    found = [(r["category"], r["index"], r["question_id"]) for r in rows]
    assert len(found) == len(set(found)) == len(expected) and set(found) == expected
    assert len({(r["shots"], r["model"]) for r in rows}) == 1
    for r in rows:
        q = in_category[r["category"]][r["index"]]
        assert (r["key"], r["options"], set(r["probabilities"])) == (q.answer, len(q.options),
                                                                    set("ABCDEFGHIJ"[:len(q.options)]))
        assert r["correct"] == (r["prediction"] == r["key"])


def test_the_widget_is_given_the_runs_own_counts(rows):
    run = live_run()
    for category, (right, n, chance) in run["categories"].items():
        mine = [r for r in rows if r["category"] == category]
        assert (right, n) == (sum(r["correct"] for r in mine), len(mine))
        assert chance == pytest.approx(sum(1 / r["options"] for r in mine) / n)
    assert (run["model"], run["shots"]) == (rows[0]["model"], rows[0]["shots"])


def test_a_sample_of_the_published_rows_rescores_the_same(rows, data, scorer):
    for row in random.Random(LIVE_RUN).sample(rows, SAMPLE):
        q = data.question(row["category"], "test", row["index"])
        again = answer_question(scorer, prompt_format=prompt, subject=q.category, question=q.question,
                                choices=q.options, shots=data.shots(q.category, row["shots"]), method="letter",
                                key=q.answer)
        assert again["prediction"] == row["prediction"], row
        for letter, p in row["probabilities"].items():
            assert abs(again["probabilities"][letter] - p) <= 1e-5, (row, again["probabilities"])
        assert again["shots_used"] == row["shots"]
