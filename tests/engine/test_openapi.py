"""The JSON API's OpenAPI description (/api/openapi.json) and a schema-driven fuzzer using it.

Beside tests/engine/test_fuzz.py's hypothesis strategies, schemathesis generates requests from the
document itself, valid and invalid ones, for every operation: none may get a 5xx (the
documented 503 of a missing model excepted), and every 4xx is JSON with an error message.
"""
from __future__ import annotations

import re

import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from engine import create_app


@pytest.fixture(scope="module")
def api_schema():
    """The API's own description, read from an app without a model (built when the fuzzer runs, not
    at import)."""
    app = create_app({"TESTING": True, "SCORER_MODEL": "/nonexistent/model-for-the-fuzzer"})
    return schemathesis.openapi.from_wsgi("/api/openapi.json", app)


schema = schemathesis.pytest.from_fixture("api_schema")


def test_every_api_route_is_described(client):
    document = client.get("/api/openapi.json").get_json()
    assert document["openapi"].startswith("3.")
    described = {(path, method) for path, item in document["paths"].items() for method in item}
    for rule in client.application.url_map.iter_rules():
        if not rule.rule.startswith(("/api/", "/oembed")) or rule.rule.startswith(("/api/openapi",)):
            continue
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            if path == "/api/explainers/{fn_name}":
                continue  # one described path per public function
            assert (path, method.lower()) in described, (path, method)


# Refusals of schema-valid requests that no one field's schema can state (two lists of one length, n
# at most the words in text, an index within its own subject, a gate's band multiple that Student's t
# with as few degrees of freedom as there are subjects less one cannot reach): the only 400s a request the document
# calls valid may get. Any other 400 means the document accepts what the server refuses.
ACROSS_FIELDS = re.compile(
    r"must have the same length|one subject per question|at least 2 different subjects|at most the number of "
    r"words|for the exact method|are all equal|for equal-count binning|has no group for subject|"
    r"index must be (a whole number )?from 0 to|must be from 0 to \d+, got|this far in the tail is beyond")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_get_no_5xx_and_answers_match_the_schema(case):
    """schemathesis's checks on every answer: no 5xx, a documented status and content type, a body
    that matches its schema, Allow on 405 and undocumented methods refused, schema-violating
    requests refused; and a schema-valid request refused only for what the schema cannot say."""
    from schemathesis.checks import negative_data_rejection, positive_data_acceptance

    response = case.call(headers={"Accept-Encoding": "identity"})  # the WSGI client does not unzip
    path = case.path
    if response.status_code == 503 and path in ("/api/score", "/api/mmlu-pro/score", "/api/mmlu-pro/generate"):
        assert response.json()["state"] == "failed" or "unavailable" in response.json()["error"]
        return
    assert response.status_code < 500, (case.method, case.formatted_path, response.status_code, response.text[:300])
    if response.status_code >= 400:
        content_type = (response.headers.get("content-type") or [""])[0]
        assert content_type.startswith("application/json"), (case.formatted_path, response.status_code, response.text[:200])
        assert isinstance(response.json()["error"], str)
    excluded = [positive_data_acceptance]  # checked below, with the across-fields refusals allowed
    if response.status_code == 413:  # a body over 64 KiB (documented) is a refusal, though not in the check's list
        excluded.append(negative_data_rejection)
    case.validate_response(response, excluded_checks=excluded)
    if case.meta is not None and case.meta.generation.mode.is_positive and response.status_code == 400:
        error = response.json()["error"]
        assert ACROSS_FIELDS.search(error), f"schema-valid {case.method} {case.formatted_path} refused: {error}"


@pytest.mark.parametrize(("fn_name", "fields"), [("paired_standard_error", ("candidate", "baseline")),
                                                  ("calibration_gap", ("correct",))])
def test_a_question_score_is_documented_as_the_server_takes_it(client, fn_name, fields):
    """A question's score is 1 or 0, true or false, or a partial score between
    (explainers.checks.scores): the document says so, so the fuzzer's true/false is a valid request."""
    document = client.get("/api/openapi.json").get_json()
    schema = document["paths"][f"/api/explainers/{fn_name}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    body = {"confidences": [0.9, 0.6, 0.7, 0.2]} if fn_name == "calibration_gap" else {}
    body |= {field: [True, False, 1, 0.5] for field in fields}
    jsonschema.validate(body, schema)
    assert client.post(f"/api/explainers/{fn_name}", json=body).status_code == 200
    for bad in ("1", None, 1.5):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(body | {fields[0]: [bad, 0, 1, 0]}, schema)
        assert client.post(f"/api/explainers/{fn_name}", json=body | {fields[0]: [bad, 0, 1, 0]}).status_code == 400
