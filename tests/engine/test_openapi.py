"""The JSON API's OpenAPI description (/api/openapi.json) and a schema-driven fuzzer using it.

Beside tests/engine/test_fuzz.py's hypothesis strategies, schemathesis generates requests from the
document itself, valid and invalid ones, for every operation: none may get a 5xx (the
documented 503 of a missing model excepted), and every 4xx is JSON with an error message. Its
checks read the repository's schemathesis.toml, as its command line does: a schema-valid request
refused (ST202) or a schema-violating one accepted (ST201) fails, except for the refusals the
document states beyond its schemas (413 for size, the 400 of an operation's x-rules-beyond-schema).
"""
from __future__ import annotations

import re
import tomllib

import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from engine import create_app
from engine.openapi import RULE_KEY
from tools.launcher import REPO_ROOT


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


# The server's words for the rules an operation lists in x-rules-beyond-schema (two lists of one length,
# n at most the words in text, an index within its own subject): the only 400s a request the document
# calls valid may get. Any other 400 means the document accepts what the server refuses.
ACROSS_FIELDS = re.compile(
    r"must have the same length|one subject per question|at least 2 different subjects|at most the number of "
    r"words|for the exact method|are all equal|for equal-count binning|has no group for subject|"
    r"index must be (a whole number )?from 0 to|must be from 0 to \d+, got")


def test_the_operations_allowed_a_400_for_a_valid_request_are_the_documents(client, api_schema):
    """schemathesis.toml lets exactly the operations that list rules beyond their schema refuse a
    schema-valid request with 400, and each says so in its 400; any other stays a failure (ST202)."""
    document = client.get("/api/openapi.json").get_json()
    operations = [op for item in document["paths"].values() for op in item.values()]
    ruled = {op["operationId"] for op in operations if op.get(RULE_KEY)}
    config = tomllib.loads((REPO_ROOT / "schemathesis.toml").read_text())
    assert [set(entry["include-operation-id"]) for entry in config["operations"]] == [ruled]
    assert all(RULE_KEY in op["responses"]["400"]["description"] for op in operations if op.get(RULE_KEY))
    for path, method, allowed in [("/api/explainers/accuracy", "POST", True), ("/api/explainers/plain_mean", "POST", False),
                                  ("/api/explainers/chance_band", "GET", True), ("/api/score", "POST", True),
                                  ("/api/explainers/student_t_quantile", "GET", False)]:
        operation = api_schema[path][method]
        checks = api_schema.config.checks_config_for(operation=operation, phase="fuzzing")
        assert checks.positive_data_acceptance.enabled and checks.negative_data_rejection.enabled
        assert ("400" in checks.positive_data_acceptance.expected_statuses) is allowed, (path, method)


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_get_no_5xx_and_answers_match_the_schema(case):
    """schemathesis's checks on every answer: no 5xx, a documented status and content type, a body
    that matches its schema, Allow on 405 and undocumented methods refused, schema-violating
    requests refused (with schemathesis.toml's refusals); and a schema-valid request refused only for
    what the schema cannot say."""
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
    case.validate_response(response)  # every check, positive_data_acceptance and negative_data_rejection too
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
