"""Live scoring of real MMLU-Pro questions with the real default model (SmolLM2-135M-Instruct), on CPU:
ten letter probabilities that sum to 1, through the API and the question browser page, and the paper's
chain-of-thought protocol streamed and length-capped."""
from __future__ import annotations

import json
import math

import pytest

from benchmarks.mmlu_pro import prompt
from benchmarks.mmlu_pro.answer import extract_answer
from tests.conftest import app_with_model, run_form_token

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def client(loaded_model):
    return app_with_model({"SCORER_QUEUE_SIZE": 1, "SCORER_TIMEOUT_S": 300}, loaded_model).test_client()


@pytest.mark.parametrize("shots", [0, 5])
def test_a_real_question_gets_ten_probabilities_that_sum_to_one(client, shots):
    response = client.post("/api/mmlu-pro/score", json={"category": "business", "index": 1, "shots": shots})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    question = body["question"]
    assert len(question["options"]) == 10
    probabilities = body["probabilities"]
    assert list(probabilities) == list("ABCDEFGHIJ")
    assert math.isclose(sum(probabilities.values()), 1.0, abs_tol=1e-9)
    assert body["prediction"] == max(probabilities, key=probabilities.get)
    assert body["key"] == question["answer"] and body["correct"] == (body["prediction"] == question["answer"])
    assert body["shots_used"] == shots
    assert body["prompt"]["text"] == prompt.build_prompt("business", question["question"], question["options"],
                                                         _shots(client, "business", shots))


def _shots(client, category: str, k: int):
    return client.application.extensions["mmlu_pro_data"].shots(category, k)


def test_a_question_with_fewer_options_gets_that_many_letters(client):
    data = client.application.extensions["mmlu_pro_data"]
    index = next(q.index for q in data.in_category("math") if len(q.options) == 4)
    body = client.post("/api/mmlu-pro/score", json={"category": "math", "index": index, "shots": 0}).get_json()
    assert list(body["probabilities"]) == list("ABCD")
    assert math.isclose(sum(body["probabilities"].values()), 1.0, abs_tol=1e-9)


def test_the_question_browser_scores_without_javascript(client):
    page = client.post("/mmlu-pro/run", data={"category": "history", "number": "88", "shots": "0",
                                          **run_form_token(client, "/mmlu-pro/run?category=history&number=88")})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "What the model said" in html and "When did the first pharaohs emerge in Egypt?" in html
    assert html.count('class="ls-bar-row') == 4 and "data-ls-verdict" in html  # the shared live form's bars


def test_the_script_gets_the_same_result_panel_alone(client):
    """The question browser's scoring in place: the same POST with ?fragment=1 answers the results panel
    alone (the shared live form), with its verdict and one bar per option."""
    response = client.post("/mmlu-pro/run?fragment=1", data={
        "category": "history", "number": "88", "shots": "0",
        **run_form_token(client, "/mmlu-pro/run?category=history&number=88")})
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "<html" not in html
    assert html.count('class="ls-bar-row') == 4 and "Prediction: " in html and "key: C" in html


def test_chain_of_thought_streams_is_capped_and_is_read_the_papers_way(client):
    # engineering: the shortest five-shot prompts (about 3,000 characters; history's #87 is 8,600); this
    # four-option question's reasoning begins another question after 28 tokens, where the protocol cuts it.
    response = client.post("/api/mmlu-pro/generate", json={"category": "engineering", "index": 1, "shots": 5,
                                                           "max_tokens": 40})
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    head, pieces, last = lines[0], [line for line in lines if "text" in line], lines[-1]
    assert head["shots_used"] == 5 and head["prompt"].endswith("Answer: Let's think step by step.")
    assert head["prompt"] == prompt.build_prompt("engineering", head["question"]["question"], head["question"]["options"],
                                                 _shots(client, "engineering", 5), chain_of_thought=True)
    assert pieces, "no text was streamed"
    # Before the first token, one line says how long the prompt is (the page shows it while it reads).
    reading = lines[1]["reading"]
    assert reading["prompt_tokens"] == last["prompt_tokens"] and 0 <= reading["cached_tokens"] < reading["prompt_tokens"]
    assert [piece["tokens"] for piece in pieces] == sorted(piece["tokens"] for piece in pieces)
    assert last["done"] and last["tokens"] <= 40 and last["reason"] in ("length", "stop", "end of text")
    assert last["stopped"] == {"length": "it reached the cap of 40 new tokens",
                               "stop": "it began another question (“Question:”), where the protocol ends the answer",
                               "end of text": "it ended its answer (the model's end-of-text token)"}[last["reason"]]
    written = "".join(piece["text"] for piece in pieces)
    assert "Question:" not in written
    found = extract_answer(written, 4)
    assert (last["extracted"], last["rule"], last["key"]) == (found.letter, found.rule, "C")


def test_a_second_question_of_a_category_reuses_its_worked_examples_and_writes_the_same(client, loaded_model):
    """Prefix reuse: the second question of a category starts from the cached worked examples, and the
    greedy text is the one the model writes reading the whole prompt (transformers' own forward)."""
    from livescoring import generate

    def stream(index):
        # engineering: the shortest five-shot prompts (about 3,000 characters; law's are 6,500)
        response = client.post("/api/mmlu-pro/generate", json={"category": "engineering", "index": index, "shots": 5,
                                                               "max_tokens": 12})
        return [json.loads(line) for line in response.get_data(as_text=True).splitlines()]

    stream(0)  # the category's header and worked examples are read once, here
    lines = stream(1)
    reading = lines[1]["reading"]
    assert reading["cached_tokens"] > reading["prompt_tokens"] / 2, reading
    written = "".join(line.get("text", "") for line in lines)
    alone = generate.stream_greedy(loaded_model, lines[0]["prompt"], 12, ("Question:",))
    assert written == "".join(event.get("text", "") for event in alone)


def test_generation_input_is_checked_before_the_model_runs(client):
    response = client.post("/api/mmlu-pro/generate", json={"category": "history", "index": 0, "max_tokens": 5000})
    assert response.status_code == 400 and response.get_json()["field"] == "max_tokens"


def test_the_question_browser_reasons_without_javascript(client):
    page = client.post("/mmlu-pro/run", data={"category": "history", "number": "88", "shots": "0", "mode": "cot",
                                          **run_form_token(client, "/mmlu-pro/run?category=history&number=88")})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "What the model wrote" in html and "the key is" in html and "stopped because it " in html
    assert "stopped at" not in html
    assert "<section class=\"run-reasoning\" aria-labelledby=\"run-reasoning-title\" data-reasoning>" in html


def test_the_evaluate_command_scores_and_writes_jsonl(tmp_path, capsys):
    from engine.__main__ import main

    out = tmp_path / "pro.jsonl"
    assert main(["mmlu-pro", "evaluate", "--categories", "history", "--limit", "2", "--shots", "0", "--threads", "1",
                 "--out", str(out), "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["category"] for r in rows] == ["history", "history"]
    assert all(math.isclose(sum(r["probabilities"].values()), 1.0, abs_tol=1e-9) for r in rows)
    assert "Per category:" in capsys.readouterr().out
