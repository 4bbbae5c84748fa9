"""A live widget prints a real example result in place of its form (paper cannot run the model)."""
from __future__ import annotations

import html
import re

from benchmarks.mmlu.server.published_runs import published_answer


def test_live_scoring_prints_the_published_runs_answer_to_its_question(real_app):
    row = published_answer("astronomy", 0)  # the form's default question: astronomy, test question 1
    assert row is not None and row["shots"] == 0 and row["split"] == "test"
    page = html.unescape(real_app.test_client().get("/mmlu/").get_data(as_text=True))
    example = re.search(r'<figure class="ls-bars ls-example"[^>]*>(.*?)</figure>', page, re.S)
    assert example, "the live widget has no printed example"
    text = re.sub(r"<[^>]+>", " ", example[1])
    assert "An example result" in text and "not a live one" in text
    assert f"Prediction: {row['prediction']}" in re.sub(r"\s+", " ", text)
    shown = [float(v) for v in re.findall(r"([\d.]+)%", re.sub(r"<svg.*?</svg>", "", example[1], flags=re.S))]
    assert shown == [round(row["probabilities"][letter] * 100, 1) for letter in "ABCD"]


def test_an_unknown_question_has_no_published_answer():
    assert published_answer("astronomy", 10_000) is None
    assert published_answer("no_such_subject", 0) is None


def test_the_three_scorers_print_a_real_result_labelled_as_an_example(real_app):
    page = real_app.test_client().get("/scoring-lesson/").get_data(as_text=True)
    table = re.search(r'<table tabindex="0" class="ts-published ts-print-only">(.*?)</table>', page, re.S)
    assert table and "An example result, not a live one" in table[1]
    assert [cell for cell in re.findall(r"<td>([\d.]+)</td>", table[1])] == ["0.636", "0.637", "0.488"]
