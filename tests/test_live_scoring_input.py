"""Live scoring's bad input and missing model: every field's error names the field; no model is loaded.

Validation runs before a request reaches the model, so these tests never load weights.
"""
from __future__ import annotations

import pytest

from engine import create_app
from tests.conftest import run_form_token

REAL = {"subject": "astronomy", "split": "test", "index": 0, "shots": 0}
OWN = {"subject": "astronomy", "question": "Which planet is largest?", "choices": ["Mars", "Jupiter", "Venus", "Earth"]}


@pytest.mark.parametrize("body, field, words", [
    ({**REAL, "subject": None}, "subject", "subject is required"),
    ({k: v for k, v in REAL.items() if k != "subject"}, "subject", "subject is required"),
    ({**REAL, "subject": "astrology"}, "subject", "unknown subject"),
    ({**REAL, "shots": 6}, "shots", "shots must be from 0 to 5"),
    ({**REAL, "shots": -1}, "shots", "shots must be from 0 to 5"),
    ({**REAL, "shots": "five"}, "shots", "shots must be a whole number"),
    ({**REAL, "shots": True}, "shots", "shots must be a whole number"),
    ({**REAL, "shots": 2.5}, "shots", "shots must be a whole number"),
    ({**REAL, "method": "vibes"}, "method", "method must be one of letter, option"),
    ({**REAL, "split": "dev"}, "split", "split must be one of test, val"),
    ({**REAL, "index": 152}, "index", "index must be from 0 to 151"),
    ({**REAL, "index": -1}, "index", "index must be from 0 to 151"),
    ({**REAL, "index": None}, "index", "index must be a whole number"),
    ({"subject": "astronomy", "shots": 0}, "index", "give split and index"),
    ({**OWN, "question": ""}, "question", "question is empty"),
    ({**OWN, "question": "   "}, "question", "question is empty"),
    ({**OWN, "question": "x" * 4001}, "question", "the limit is 4,000"),
    ({**OWN, "question": 7}, "question", "question must be text"),
    ({**OWN, "choices": ["a", "b", "c"]}, "choices", "exactly four"),
    ({**OWN, "choices": ["a", "b", "c", "d", "e"]}, "choices", "exactly four"),
    ({**OWN, "choices": "a,b,c,d"}, "choices", "exactly four"),
    ({**OWN, "choices": ["a", "", "c", "d"]}, "choices[1] (B)", "is empty"),
    ({**OWN, "choices": ["a", "b", 3, "d"]}, "choices[2] (C)", "must be text"),
    ({**OWN, "choices": ["a", "b", "c", "d" * 1001]}, "choices[3] (D)", "the limit is 1,000"),
    ({**OWN, "answer": "E"}, "answer", "must be one of A, B, C, D"),
    ({**OWN, "index": 0}, "question", "not both"),
])
def test_bad_fields_get_a_400_naming_the_field(client, body, field, words):
    response = client.post("/api/score", json=body)
    assert response.status_code == 400
    payload = response.get_json()
    assert payload["field"] == field
    assert words in payload["error"]


@pytest.mark.parametrize("kwargs", [{"data": "not json", "content_type": "text/plain"}, {"json": [1, 2]}, {"json": "text"}])
def test_a_body_that_is_not_a_json_object_is_a_400(client, kwargs):
    response = client.post("/api/score", **kwargs)
    assert response.status_code == 400
    assert response.get_json()["field"] == "body"


@pytest.mark.parametrize("url, status, words", [
    ("/api/questions/astrology", 404, "unknown subject"),
    ("/api/questions/astronomy?split=dev", 400, "split must be one of"),
    ("/api/questions/astronomy?index=152", 400, "index must be a whole number from 0 to 151"),
    ("/api/questions/astronomy?index=x", 400, "index must be"),
    ("/api/questions/astronomy?limit=0", 400, "limit must be"),
])
def test_question_listing_rejects_bad_parameters(client, url, status, words):
    response = client.get(url)
    assert response.status_code == status
    assert words in response.get_json()["error"]


def test_question_listing_serves_real_questions(client):
    one = client.get("/api/questions/astronomy?index=2").get_json()
    assert one["question"] == "Why is the sky blue?" and one["answer"] == "C" and len(one["choices"]) == 4
    page = client.get("/api/questions/astronomy?offset=150&limit=50").get_json()
    assert page["count"] == 152 and [item["index"] for item in page["items"]] == [150, 151]
    subjects = client.get("/api/questions").get_json()["subjects"]
    assert len(subjects) == 57 and sum(s["test"] for s in subjects) == 14042


def test_the_page_shows_a_form_error_in_words_without_loading_the_model(client):
    response = client.post("/mmlu/run", data={**run_form_token(client), "subject": "astronomy", "source": "own",
                                              "question": "", "shots": "0",
                                              "method": "letter",
                                              "choice_a": "a", "choice_b": "b", "choice_c": "c", "choice_d": "d"})
    assert response.status_code == 400
    assert "question is empty" in response.get_data(as_text=True)


def test_a_missing_model_is_a_503_saying_what_to_do_and_the_site_keeps_working(tmp_path):
    app = create_app({"TESTING": True, "SCORER_MODEL": str(tmp_path / "no-such-model")})
    client = app.test_client()
    response = client.post("/api/score", json=REAL)
    assert response.status_code == 503
    message = response.get_json()["error"]
    assert "SCORER_MODEL" in message and "smollm2" in message
    assert client.get("/api/model").get_json()["state"] == "failed"
    assert client.get("/").status_code == 200
    page = client.get("/mmlu/run")
    assert page.status_code == 200 and "SCORER_MODEL" in page.get_data(as_text=True)
    assert client.get("/api/questions/astronomy?index=0").status_code == 200
    form = client.post("/mmlu/run", data={**run_form_token(client), "subject": "astronomy", "source": "real",
                                          "split": "test", "index": "0",
                                          "shots": "0", "method": "letter"})
    assert form.status_code == 503 and "Live scoring is unavailable" in form.get_data(as_text=True)


def test_a_model_id_missing_from_the_local_cache_is_a_503_not_a_download():
    app = create_app({"TESTING": True, "SCORER_MODEL": "nobody-here/no-such-model-anywhere"})
    response = app.test_client().post("/api/score", json=REAL)
    assert response.status_code == 503
    assert "never downloads weights" in response.get_json()["error"]
