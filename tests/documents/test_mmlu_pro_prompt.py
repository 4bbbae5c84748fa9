"""MMLU-Pro prompts byte for byte, and the scoring routes' input checks (no model is loaded here;
tests/model/test_mmlu_pro_live.py runs the real model)."""
from __future__ import annotations

import re

import pytest

from benchmarks.mmlu_pro import prompt
from benchmarks.mmlu_pro.server import data_dir
from benchmarks.mmlu_pro.server.reader import MMLUProData
from engine import create_app

DATA = MMLUProData(data_dir({}))
pytestmark = pytest.mark.skipif(not (DATA.root / "test-00000-of-00001.parquet").is_file(),
                                reason="the MMLU-Pro release is not in MMLU_PRO_DATA_DIR")
INSTRUCTION = ('The following are multiple choice questions (with answers) about history. Think step by step and then '
               'finish your answer with "the answer is (X)" where X is the correct letter choice.\n\n\n\n')
QUESTION = ("Question:\nWhen did the first pharaohs emerge in Egypt?\nOptions:\n"
            "A. 3100 B.P.\nB. 4100 B.P.\nC. 5100 B.P.\nD. 6100 B.P.\n")


@pytest.fixture(scope="module")
def pharaohs():
    q = DATA.question("history", "test", 87)
    assert q.question == "When did the first pharaohs emerge in Egypt?" and q.answer == "C"
    return q


def test_chain_of_thought_prompt_with_no_shots(pharaohs):
    text = prompt.build_prompt("history", pharaohs.question, pharaohs.options, (), chain_of_thought=True)
    assert text == INSTRUCTION + QUESTION + "Answer: Let's think step by step."


def authors_layout(example, with_answer: bool) -> str:
    """The authors' format_cot_example (TIGER-AI-Lab/MMLU-Pro 05c6997), written out again here."""
    text = "Question:\n" + example.question + "\n" + "Options:\n"
    for letter, option in zip("ABCDEFGHIJ", example.options, strict=False):
        text += f"{letter}. {option}\n"
    if with_answer:
        return text + example.cot_content.replace("A: Let's think step by step.", "Answer: Let's think step by step.") + "\n\n"
    return text + "Answer: Let's think step by step."


def test_chain_of_thought_prompt_with_five_shots(pharaohs):
    shots = DATA.shots("history", 5)
    assert [s.question_id for s in shots] == [55, 56, 57, 58, 59]  # the category's validation rows, in file order
    text = prompt.build_prompt("history", pharaohs.question, pharaohs.options, shots, chain_of_thought=True)
    expected = INSTRUCTION + "".join(authors_layout(s, True) for s in shots) + authors_layout(pharaohs, False)
    assert text == expected
    assert text.count("The answer is (") == 5 and text.endswith(QUESTION + "Answer: Let's think step by step.")
    assert "N/A" not in text  # the validation fillers are dropped (shot 55 has eight real options)
    assert len(shots[0].options) == 8 and "H. " in text and "\nI. " not in authors_layout(shots[0], True)


def test_letter_prompt_with_no_shots_and_five(pharaohs):
    zero = prompt.build_prompt("history", pharaohs.question, pharaohs.options)
    assert zero == ("The following are multiple choice questions (with answers) about history.\n\n"
                    + QUESTION + "Answer:")
    shots = DATA.shots("history", 5)
    five = prompt.build_prompt("history", pharaohs.question, pharaohs.options, shots)
    first = shots[0]
    assert five.startswith("The following are multiple choice questions (with answers) about history.\n\nQuestion:\n"
                           + first.question + "\nOptions:\nA. " + first.options[0] + "\n")
    assert five.count("\nAnswer: ") == 5 and five.endswith(QUESTION + "Answer:")
    assert [line[-1] for line in five.split("\n") if line.startswith("Answer: ")] == [s.answer for s in shots]


def test_prompt_parts_name_each_piece(pharaohs):
    parts = prompt.prompt_parts("history", pharaohs.question, pharaohs.options, DATA.shots("history", 2))
    assert [p.kind for p in parts] == ["header", "shot", "shot", "question"] + ["option"] * 4 + ["answer_cue"]


def test_prompt_limits():
    with pytest.raises(ValueError, match="2 to 10 options"):
        prompt.prompt_parts("math", "q", ["only one"])
    with pytest.raises(ValueError, match="2 to 10 options"):
        prompt.prompt_parts("math", "q", [str(i) for i in range(11)])
    with pytest.raises(ValueError, match="at most 5 shots"):
        prompt.prompt_parts("math", "q", ["a", "b"], DATA.shots("math", 5) * 2)


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def test_questions_api_lists_categories_and_serves_real_questions(client):
    body = client.get("/api/mmlu-pro/questions").get_json()
    assert len(body["categories"]) == 14 and body["categories"][0] == {"name": "math", "test": 1351, "validation": 5}
    one = client.get("/api/mmlu-pro/questions/history?index=87").get_json()
    assert one["question"] == "When did the first pharaohs emerge in Egypt?" and one["answer"] == "C"
    assert client.get("/api/mmlu-pro/questions/computer-science?random=1").get_json()["category"] == "computer science"


@pytest.mark.parametrize("url, status", [
    ("/api/mmlu-pro/questions/astrology", 404),
    ("/api/mmlu-pro/questions/history?index=381", 400),
    ("/api/mmlu-pro/questions/history?index=-1", 400),
    ("/api/mmlu-pro/questions/history?split=dev", 400),
    ("/api/mmlu-pro/questions/history?index=%C2%B2", 400),  # "²" is a digit to str.isdigit, not to int()
    ("/api/mmlu-pro/questions/%3Cscript%3E", 404),
])
def test_questions_api_refuses_bad_input_in_words(client, url, status):
    response = client.get(url)
    assert response.status_code == status and response.get_json()["error"]


@pytest.mark.parametrize("body, field", [
    ({"category": "astrology", "index": 0}, "category"),
    ({"category": "history", "index": 381}, "index"),
    ({"category": "history", "index": "3"}, "index"),
    ({"category": "history", "index": True}, "index"),
    ({"category": "history", "index": 0, "shots": 6}, "shots"),
    ({"category": "<script>", "index": 0}, "category"),
])
def test_score_api_names_the_bad_field_without_loading_the_model(client, body, field):
    response = client.post("/api/mmlu-pro/score", json=body)
    assert response.status_code == 400
    assert response.get_json()["field"] == field and "<script>" not in response.get_data(as_text=True)


def test_score_api_refuses_a_body_that_is_not_an_object(client):
    assert client.post("/api/mmlu-pro/score", data="[]", content_type="application/json").status_code == 400
    assert client.post("/api/mmlu-pro/score", data="not json").status_code == 400


@pytest.mark.parametrize("query, words", [
    ("number=%C2%B2&shots=%C2%B2", ["Type a question number from 1 to 1,351", "Choose from 0 to 5 worked examples."]),
    ("category=%3Cb%3E&number=-4", ["There is no such category", "Type a question number from 1 to 1,351"]),
    ("number=99999999999999999999", ["Type a question number from 1 to 1,351: math has 1,351 test questions."]),
    ("category=history&number=0", ["Type a question number from 1 to 381: history has 381 test questions."]),
    ("category=history&number=88&shots=9", ["Choose from 0 to 5 worked examples."]),
])
def test_the_question_browser_names_each_wrong_field_in_words(client, query, words):
    """Odd input is a 400 that says beside each field what to fix, never a 5xx, and is never echoed as markup."""
    response = client.get(f"/mmlu-pro/run?{query}")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and "<b>" not in html
    assert all(w in html for w in words), html[html.find('class="run-error"'):][:600]
    assert html.count('aria-invalid="true"') == len(words) and html.count(" autofocus") == 1
    assert "index must" not in html and "shots must" not in html  # the API's wording is for programs


def test_the_question_browser_numbers_questions_from_one(client):
    html = client.get("/mmlu-pro/run?category=history&number=88&shots=0").get_data(as_text=True)
    assert "history, question 88</h2>" in html and "When did the first pharaohs emerge in Egypt?" in html
    assert 'name="number" value="88"' in html and "1 to 381" in html


def test_show_this_question_in_place_answers_the_shown_question_alone(client):
    """The page's script asks for the same GET with ?fragment=1: only the shown question (with its
    scoring form and the data the script puts in the address), or the problems by field, as a 200."""
    response = client.get("/mmlu-pro/run?category=history&number=88&shots=1&fragment=1")
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "<html" not in html and 'class="run-form"' not in html
    assert 'data-category="history" data-number="88" data-shots="1"' in html
    assert "When did the first pharaohs emerge in Egypt?" in html and 'name="csrf_token"' in html
    assert 'action="/mmlu-pro/run?category=history&amp;number=88&amp;shots=1"' in html
    random = client.get("/mmlu-pro/run?category=history&random=1&shots=0&fragment=1").get_data(as_text=True)
    number = int(re.search(r'data-number="(\d+)"', random).group(1))
    assert 1 <= number <= 381 and f"history, question {number}</h2>" in random
    refused = client.get("/mmlu-pro/run?category=history&number=0&shots=9&fragment=1")
    said = refused.get_data(as_text=True)
    assert refused.status_code == 200 and 'class="run-question"' not in said
    assert '<li data-problem-for="run-number"><a href="#run-number">Type a question number from 1 to 381' in said
    assert '<li data-problem-for="run-shots">' in said
    assert client.get("/mmlu-pro/run?category=history&number=0").status_code == 400  # the page itself: the real status


def test_the_printed_question_browser_shows_the_published_runs_answer(client, pharaohs):
    """Paper cannot run the model: the shown question prints with the published run's answer to it,
    labelled as an example (benchmarks/mmlu_pro/runs/), its numbers the file's own."""
    from benchmarks.mmlu_pro.server import LIVE_RUN, RUNS_DIR
    from benchmarks.server.runfile import read_rows

    row = next(r for r in read_rows(RUNS_DIR / LIVE_RUN) if r["question_id"] == pharaohs.question_id)
    html = client.get("/mmlu-pro/run?category=history&number=88&shots=5").get_data(as_text=True)
    example = html[html.index('<div class="ls-example run-example">'):html.index("</section>", html.index("ls-example"))]
    assert "An example result, not a live one" in example and "published 0-shot run" in example
    assert f"Prediction: {row['prediction']}" in example and f"key: {row['key']}" in example
    shown = [float(v) for v in re.findall(r'<span class="ls-bar-value">([\d.]+)%', example)]
    assert shown == [round(100 * row["probabilities"][letter], 1) for letter in "ABCD"]
    assert "run-print-only" not in example
    # A question the run did not score (it covers the first 100 of each category) says so instead.
    later = client.get("/mmlu-pro/run?category=history&number=300").get_data(as_text=True)
    assert "ls-example" not in later.split('class="run-question"')[1] and "not in the published run" in later


def test_a_bare_post_to_the_question_browser_does_not_start_the_model(client):
    response = client.post("/mmlu-pro/run", data={"index": "3"})
    assert response.status_code == 400 and "without a known category" in response.get_data(as_text=True)
    assert client.application.extensions["scoring"].state == "not loaded"


def test_evaluate_summary_and_whole_file_writing(tmp_path):
    from benchmarks.server.runfile import write_rows
    from benchmarks.server.summary import summarise

    rows = [{"category": "law", "options": 10, "prediction": "A", "key": "A"},
            {"category": "law", "options": 10, "prediction": "B", "key": "A"},
            {"category": "math", "options": 4, "prediction": "C", "key": "C"}]
    summary = summarise(rows, "categories")
    assert summary["questions"] == 3 and round(summary["micro"]["accuracy"], 4) == 0.6667
    assert summary["categories"]["law"]["n"] == 2 and summary["categories"]["law"]["accuracy"] == 0.5
    assert round(summary["chance"], 4) == 0.15  # (0.1 + 0.1 + 0.25) / 3
    out = tmp_path / "runs" / "r.jsonl"
    out.parent.mkdir()
    write_rows(rows, out)
    assert out.read_text().count("\n") == 3 and [p.name for p in out.parent.iterdir()] == ["r.jsonl"]


def test_evaluate_refuses_unknown_categories_in_words(capsys):
    from engine.__main__ import main

    assert main(["mmlu-pro", "evaluate", "--categories", "astrology"]) == 2
    assert "unknown category: astrology" in capsys.readouterr().err
