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
    ({**REAL, "rotation": 4}, "rotation", "rotation must be from 0 to 3"),
    ({**REAL, "rotation": "one"}, "rotation", "rotation must be a whole number"),
    ({**OWN, "rotation": 1}, "rotation", "rotation moves a real question's options"),
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


def _own_form(client, **fields) -> dict:
    return {**run_form_token(client), "subject": "astronomy", "source": "own", "question": "Q?", "shots": "0",
            "method": "letter", "choice_a": "a", "choice_b": "b", "choice_c": "c", "choice_d": "d", **fields}


def test_the_form_shows_every_problem_in_words_beside_its_field(client):
    """No-JavaScript post: each empty field is marked invalid, described by its message, and the
    first takes the focus; the reader never sees the API's names for the fields."""
    response = client.post("/mmlu/run", data=_own_form(client, question=" ", choice_b="", choice_d=""))
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    for control, words in [("ls-question", "The question is empty: type your question"),
                           ("ls-choice-b", "Option B is empty: type an answer"),
                           ("ls-choice-d", "Option D is empty: type an answer")]:
        assert f'id="{control}-error" data-field-error="{control}">{words}' in html
        assert f'<li data-problem-for="{control}"><a href="#{control}">{words}' in html
    assert 'id="ls-question" name="question" rows="3" maxlength="4000" aria-describedby="ls-question-error" ' \
           'aria-invalid="true" autofocus>' in html
    assert html.count('aria-invalid="true"') == 3 and html.count(" autofocus") == 1
    assert "choices[" not in html and "is empty</" not in html


def test_the_api_keeps_the_precise_field_names_and_lists_every_problem(client):
    response = client.post("/api/score", json={**OWN, "question": "", "choices": ["a", "", "c", ""]})
    payload = response.get_json()
    assert response.status_code == 400 and payload["field"] == "question"
    assert payload["problems"] == [{"field": "question", "error": "question is empty"},
                                   {"field": "choices[1] (B)", "error": "choices[1] (B) is empty"},
                                   {"field": "choices[3] (D)", "error": "choices[3] (D) is empty"}]


def test_the_form_numbers_questions_from_one(client):
    page = client.get("/mmlu/run").get_data(as_text=True)
    assert 'name="number" type="number" inputmode="numeric" min="1" max="152"' in page and "1 to 152" in page
    assert "What is true for a type-Ia" in page  # number 1 is the file's first row (index 0)
    response = client.post("/mmlu/run", data={**run_form_token(client), "subject": "astronomy", "source": "real",
                                              "split": "test", "number": "153", "shots": "0", "method": "letter"})
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert ('id="ls-number-error" data-field-error="ls-number">Type a question number from 1 to 152: '
            "astronomy has 152 questions in its test split.") in html
    assert "index must" not in html


def test_your_own_question_is_filed_under_the_chosen_subject_and_says_so(client):
    page = client.get("/mmlu/run").get_data(as_text=True)
    assert "Filed under <strong data-ls-filed>astronomy</strong>" in page
    assert "about <span data-ls-filed>astronomy</span>." in page


def test_the_widget_page_has_a_heading_share_box_and_links_to_the_paper(client):
    page = client.get("/mmlu/widgets/live-scoring").get_data(as_text=True)
    assert '<h1 class="widget-title" id="ls-title">Run it yourself: a real model answers MMLU</h1>' in page
    assert "<summary>Share / embed</summary>" in page and "/embed/mmlu/live-scoring" in page
    assert 'href="/mmlu/#setup"' in page and 'href="/mmlu/#run-it-yourself"' in page
    run = client.get("/mmlu/run").get_data(as_text=True)
    assert run.count("<h1") == 1 and 'href="/mmlu/#setup"' in run
