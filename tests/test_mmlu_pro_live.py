"""Live scoring of real MMLU-Pro questions with the real default model (SmolLM2-135M-Instruct), on CPU:
ten letter probabilities that sum to 1, through the API and the question browser page."""
from __future__ import annotations

import math

import pytest

from engine import create_app
from papers.mmlu_pro import prompt

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def client():
    app = create_app({"TESTING": True, "SCORER_LOAD_AT_START": True, "SCORER_THREADS": 1,
                      "SCORER_QUEUE_SIZE": 1, "SCORER_TIMEOUT_S": 300})
    service = app.extensions["scoring"]
    assert service.wait_ready(600), service.status()["message"]
    return app.test_client()


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
    page = client.post("/mmlu-pro/run", data={"category": "history", "index": "87", "shots": "0"})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "What the model said" in html and "When did the first pharaohs emerge in Egypt?" in html
    assert html.count('<th scope="row">') == 4
