"""Issue 26: every request that starts the model is budgeted for all the work it causes
(benchmarks/server/budget.py), before the model is loaded or queued: MMLU-Pro's score, its chain of
thought (the API and the page without JavaScript), as MMLU's /api/score and forms already were."""
from __future__ import annotations

import pytest

from benchmarks.server import budget
from engine import create_app
from tests.conftest import run_form_token

COSTLIEST = {"category": "history", "index": 314}  # the longest MMLU-Pro chain-of-thought prompt at 5 shots
NORMAL = {"category": "math", "index": 0}


@pytest.fixture()
def app(tmp_path):
    """An app whose model cannot load: a request that passes the budget gets 503, one that does not
    gets 413, and "not loaded" proves the model was never started."""
    return create_app({"TESTING": True, "SCORER_MODEL": str(tmp_path / "no-model-here")})


def test_the_costliest_chain_of_thought_is_refused_before_the_model_naming_what_fits(app):
    client = app.test_client()
    response = client.post("/api/mmlu-pro/generate", json={**COSTLIEST, "shots": 5, "max_tokens": 512})
    body = response.get_json()
    assert response.status_code == 413, body
    assert body["field"] == "shots"
    assert "about 22,220 characters" in body["error"] and "the limit per request is 16,000" in body["error"]
    assert "use no worked examples (shots 0)" in body["error"], body["error"]
    assert "ask for at most 201 new tokens (max_tokens)" in body["error"], body["error"]
    assert app.extensions["scoring"].state == "not loaded"


def test_what_the_refusal_names_fits(app):
    client = app.test_client()
    for fewer in ({"shots": 0, "max_tokens": 512}, {"shots": 5, "max_tokens": 201}):
        response = client.post("/api/mmlu-pro/generate", json={**COSTLIEST, **fewer})
        assert response.status_code == 503, (fewer, response.get_json())  # past the budget: the model is missing
    response = client.post("/api/mmlu-pro/generate", json={**COSTLIEST, "shots": 5, "max_tokens": 202})
    assert response.status_code == 413


def test_a_normal_chain_of_thought_and_score_pass_the_budget(app):
    client = app.test_client()
    assert client.post("/api/mmlu-pro/generate", json={**NORMAL, "shots": 5, "max_tokens": 256}).status_code == 503
    assert client.post("/api/mmlu-pro/score", json={**COSTLIEST, "shots": 5}).status_code == 503  # letters: cheap


def test_mmlu_pro_scoring_is_budgeted_too(tmp_path):
    app = create_app({"TESTING": True, "SCORER_MODEL": str(tmp_path / "none"), "SCORER_MAX_WORK_CHARS": 4000})
    response = app.test_client().post("/api/mmlu-pro/score", json={**COSTLIEST, "shots": 5})
    body = response.get_json()
    assert response.status_code == 413 and body["field"] == "shots", body
    assert "twice the 20 characters of the letters it compares" in body["error"]
    assert "use no worked examples (shots 0)" in body["error"], body["error"]
    assert app.extensions["scoring"].state == "not loaded"


def test_the_page_without_javascript_is_budgeted_for_its_chain_of_thought(app):
    client = app.test_client()
    page = "/mmlu-pro/run?category=history&number=315"
    response = client.post("/mmlu-pro/run", data={"category": "history", "number": "315", "shots": "5", "mode": "cot",
                                                  **run_form_token(client, page)})
    html = response.get_data(as_text=True)
    assert response.status_code == 413
    assert "This is more than the model may read for one answer here" in html
    assert "choose 4 worked examples or fewer; or score the option letters without reasoning first" in html, html
    assert app.extensions["scoring"].state == "not loaded"
    # The same question scored by its letters fits.
    response = client.post("/mmlu-pro/run", data={"category": "history", "number": "315", "shots": "5",
                                                  **run_form_token(client, page)})
    assert response.status_code == 503


def test_the_budget_rule():
    assert budget.work(1000) == 1000
    assert budget.work(1000, continuation_chars=8) == 1016
    assert budget.work(1000, new_tokens=10) == 1000 + 10 * budget.GENERATED_TOKEN_CHARS
    assert budget.max_new_tokens(15_000, 16_000, 512) == 50 and budget.max_new_tokens(17_000, 16_000, 512) == 0
    assert budget.most_that_fit(lambda n: 1000 * n, 3500, 5) == 3 and budget.most_that_fit(lambda n: 9, 5, 5) is None


def test_with_no_worked_examples_to_drop_the_refusal_names_max_tokens(tmp_path):
    app = create_app({"TESTING": True, "SCORER_MODEL": str(tmp_path / "none"), "SCORER_MAX_WORK_CHARS": 8000})
    response = app.test_client().post("/api/mmlu-pro/generate", json={**NORMAL, "shots": 0, "max_tokens": 512})
    body = response.get_json()
    assert response.status_code == 413 and body["field"] == "max_tokens", body
    assert "To fit: ask for at most" in body["error"] and "worked example" not in body["error"].split("To fit:")[1]
