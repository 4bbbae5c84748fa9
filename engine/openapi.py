"""The JSON API described as OpenAPI 3.0, served at /api/openapi.json.

The math core's part is generated from the public functions' signatures (explainers.registry),
so it cannot drift from them; every other blueprint describes its own routes in an ``openapi``
attribute (a dict of OpenAPI path items), collected here, so the engine names no document.
tests/engine/test_openapi.py feeds the document to schemathesis, which generates requests from it.
"""
from __future__ import annotations

import inspect
import typing
from functools import cache

from flask import Blueprint, current_app, jsonify

import explainers
from explainers import checks
from explainers.calibration import BINNINGS
from explainers.lesson import MAX_SIMULATED_QUESTIONS, NORMALIZATIONS
from explainers.registry import PUBLIC
from explainers.stats import BAND_METHODS, INTERVAL_METHODS, MAX_DEGREES_OF_FREEDOM, MAX_EXACT_N, MIN_T_QUANTILE_Q

from . import api  # (api imports this module: its names are read at call time)

bp = Blueprint("openapi", __name__)

ERROR = {"type": "object", "required": ["error", "status"],
         "properties": {"error": {"type": "string"}, "status": {"type": "integer"}, "field": {"type": "string"},
                        "problems": {"type": "array", "items": {  # every field's error, when there are several
                            "type": "object", "properties": {"field": {"type": "string"}, "error": {"type": "string"}}}}}}
JSON_OBJECT = {"type": "object"}


def json_response(description: str, schema: dict | None = None) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema or JSON_OBJECT}}}


def error(description: str) -> dict:
    return json_response(description, {"$ref": "#/components/schemas/Error"})


def _schema(hint) -> dict:
    """The JSON schema of one Python type hint of a public function."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    simple = {float: {"type": "number"}, int: {"type": "integer"}, str: {"type": "string"}, bool: {"type": "boolean"}}
    if hint in simple:
        return dict(simple[hint])
    if origin is list:
        return {"type": "array", "items": _schema(args[0]) if args else {}}
    if origin is dict or hint is dict:
        return {"type": "object", "additionalProperties": _schema(args[1]) if len(args) == 2 else {}}
    return {}


# What the functions' own checks (explainers/checks.py) and the API's cost bounds (api.py) accept,
# beyond the type hints, so that a request the document calls valid is one the server takes
# (issue 26): ranges, list lengths, choices. What JSON Schema cannot say (two lists of the same
# length, n at most the words in text) stays in the function's 400, and the operation names it in
# RULE_KEY; every operation has an example that is accepted.
_L = checks.LARGEST_WHOLE
_NUMBER = {"type": "number", "minimum": -_L, "maximum": _L}
_PROBABILITY = {"type": "number", "minimum": 0, "maximum": 1}
# One question's score (explainers.checks.scores): 1 or true for right, 0 or false for wrong, or a
# partial score between.
_SCORE = {"anyOf": [_PROBABILITY, {"type": "boolean"}]}
_LEVEL = {"type": "number", "minimum": 0, "maximum": checks.MAX_LEVEL, "exclusiveMinimum": True}
_LOGPROB = {"type": "number", "minimum": -_L, "maximum": 0}
_OPEN_UNIT = {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMinimum": True, "exclusiveMaximum": True}
_DEGREES = {"type": "number", "minimum": 1, "maximum": MAX_DEGREES_OF_FREEDOM}


def _whole(low: int = 1, high: int = _L) -> dict:
    return {"type": "integer", "minimum": low, "maximum": high}


def _list(items: dict, low: int = 1) -> dict:
    return {"type": "array", "items": items, "minItems": low, "maxItems": api.MAX_ITEMS}


def _choice(values) -> dict:
    return {"type": "string", "enum": list(values)}


def _mapping(values: dict, low: int = 1) -> dict:
    return {"type": "object", "additionalProperties": values, "minProperties": low}


@cache
def _constraints() -> tuple[dict, dict]:
    """({parameter: schema}, {function: {parameter: schema}}): the first wherever a name appears,
    the second where one function's differs."""
    labels = _list({"type": "string"})
    by_name = {  # a parameter's schema wherever it appears, unless the function's own entry says otherwise
        "p": _PROBABILITY, "n": _whole(), "level": _LEVEL, "options": _whole(2), "score": _PROBABILITY,
        "known": _PROBABILITY, "letter_probs": _mapping(_NUMBER), "logits": _list(_NUMBER),
        "predictions": labels, "keys": labels, "subjects": labels, "clusters": labels,
        "values": _list(_NUMBER), "counts": _list(_whole()), "accuracies": _list(_PROBABILITY),
        "confidences": _list(_PROBABILITY), "correct": _list(_SCORE), "bins": _whole(),
        "binning": _choice(BINNINGS), "candidate": _list(_SCORE, 2), "baseline": _list(_SCORE, 2),
        "multiple": {"type": "number", "minimum": 0, "maximum": explainers.MAX_MULTIPLE, "exclusiveMinimum": True},
        "token_logprobs": _list(_LOGPROB),
        "normalize": _choice(NORMALIZATIONS), "correction": _choice(explainers.CORRECTIONS), "accuracy": _PROBABILITY,
        "leaked_fraction": _PROBABILITY,
        "memorized_accuracy": _PROBABILITY, "questions": _whole(1, MAX_SIMULATED_QUESTIONS), "seed": _whole(0),
        "subject_groups": _mapping({"type": "string"}),
        "subject_results": _mapping({"type": "object", "required": ["n", "accuracy"],
                                     "properties": {"n": _whole(), "accuracy": _PROBABILITY}}),
    }
    by_function = {
        "normal_quantile": {"q": _OPEN_UNIT},
        "student_t_quantile": {"q": {"type": "number", "minimum": MIN_T_QUANTILE_Q, "maximum": 1, "exclusiveMaximum": True},
                               "df": _DEGREES},
        "student_t_cdf": {"x": _NUMBER, "df": _DEGREES},
        "confidence_interval": {"method": _choice(INTERVAL_METHODS)},
        "is_distinguishable_from_chance": {"method": _choice(INTERVAL_METHODS)},
        "chance_band": {"method": _choice(BAND_METHODS)},
        "binomial_cdf": {"k": _whole(0), "n": _whole(1, MAX_EXACT_N)},
        "top_two": {"letter_probs": _mapping(_PROBABILITY, 2)},
        "confidence_accuracy_correlation": {"confidences": _list(_PROBABILITY, 2), "accuracies": _list(_PROBABILITY, 2)},
        "pick_option": {"options": _mapping(_list(_LOGPROB))},
        "ngram_overlap": {"n": _whole(1, api.ARGUMENT_CAPS["ngram_overlap"]["n"][0])},
    }
    return by_name, by_function


# The rules a request the document calls valid may still break, each refused with a 400 that names
# it: an operation lists them under RULE_KEY, and only such an operation may refuse a schema-valid
# request with 400 (schemathesis.toml allows it those, tests/engine/test_openapi.py checks both).
RULE_KEY = "x-rules-beyond-schema"
_ONE_LENGTH = "{} must have one length"
_SUBJECTS = "clusters must name at least 2 different subjects"
_EXACT = f"with the exact method, n must be at most {MAX_EXACT_N:,}"  # the normal method takes any n
_EQUAL_COUNT = "with equal-count binning, bins must be at most the number of answers"
RULES_BEYOND_SCHEMA = {
    "accuracy": [_ONE_LENGTH.format("predictions and keys")],
    "weighted_accuracy": [_ONE_LENGTH.format("counts and accuracies")],
    "subject_accuracies": [_ONE_LENGTH.format("predictions, keys and subjects")],
    "group_accuracies": ["subject_groups must name a group for every subject in subject_results"],
    "calibration_gap": [_ONE_LENGTH.format("confidences and correct")],
    "calibration_bins": [_ONE_LENGTH.format("confidences and correct"), _EQUAL_COUNT],
    "rms_calibration_error": [_ONE_LENGTH.format("confidences and correct"), _EQUAL_COUNT],
    "confidence_accuracy_correlation": [_ONE_LENGTH.format("confidences and accuracies"),
                                        "neither list may have all its values equal"],
    **{name: [_ONE_LENGTH.format("candidate and baseline")]
       for name in ("paired_delta", "paired_standard_error", "independent_standard_error")},
    "clustered_standard_error": [_ONE_LENGTH.format("candidate, baseline and clusters"), _SUBJECTS],
    "gate_verdict": [_ONE_LENGTH.format("candidate, baseline and clusters"), _SUBJECTS],
    "subject_deltas": [_ONE_LENGTH.format("candidate, baseline and clusters")],
    "chance_band": [_EXACT],
    "ngram_overlap": ["n must be at most the number of words in text"],
}

EXAMPLES = {  # one accepted call of each function (the API's own smoke test; schemathesis sends them)
    "normal_quantile": {"q": 0.975}, "standard_error": {"p": 0.25, "n": 100},
    "margin_of_error": {"p": 0.439, "n": 14042}, "confidence_interval": {"p": 0.3, "n": 100, "method": "wilson"},
    "binomial_cdf": {"k": 30, "n": 100, "p": 0.25}, "chance_band": {"n": 100, "method": "exact"},
    "is_distinguishable_from_chance": {"score": 0.3, "n": 1000},
    "predict": {"letter_probs": {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}},
    "top_two": {"letter_probs": {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}}, "softmax": {"logits": [2.0, 1.0, 0.5, 0.1]},
    "accuracy": {"predictions": ["B", "C", "A"], "keys": ["B", "A", "A"]},
    "weighted_accuracy": {"counts": [100, 300], "accuracies": [0.5, 0.7]}, "plain_mean": {"values": [0.5, 0.7]},
    "subject_accuracies": {"predictions": ["B", "C", "A"], "keys": ["B", "A", "A"], "subjects": ["law", "law", "art"]},
    "group_accuracies": {"subject_results": {"law": {"n": 10, "accuracy": 0.5}, "art": {"n": 20, "accuracy": 0.7}},
                         "subject_groups": {"law": "humanities", "art": "humanities"}},
    "average_confidence": {"confidences": [0.9, 0.6, 0.7]},
    "calibration_gap": {"confidences": [0.9, 0.6, 0.7], "correct": [1, 0, 1]},
    "calibration_bins": {"confidences": [0.9, 0.6, 0.7, 0.3], "correct": [1, 0, 1, 0], "bins": 2},
    "rms_calibration_error": {"confidences": [0.9, 0.6, 0.7, 0.3], "correct": [1, 0, 1, 0], "bins": 2},
    "confidence_accuracy_correlation": {"confidences": [0.9, 0.6, 0.7], "accuracies": [0.8, 0.5, 0.75]},
    **{name: {"candidate": [1, 1, 0, 1], "baseline": [1, 0, 0, 1]}
       for name in ("paired_delta", "paired_standard_error", "independent_standard_error")},
    **{name: {"candidate": [1, 1, 0, 1, 0, 1], "baseline": [1, 0, 0, 1, 1, 0], "clusters": ["law"] * 3 + ["math"] * 3}
       for name in ("clustered_standard_error", "subject_deltas", "gate_verdict")},
    "student_t_cdf": {"x": 2.0, "df": 7}, "student_t_quantile": {"q": 0.975, "df": 56},
    "option_logprob": {"token_logprobs": [-0.5, -1.25], "normalize": "per_token"},
    "pick_option": {"options": {"A": [-0.5, -1.0], "B": [-2.0]}}, "expected_score": {"known": 0.5},
    "ngram_overlap": {"text": "the quick brown fox jumps over the lazy dog", "reference": "a quick brown fox jumps", "n": 3},
    "simulate_contamination": {"accuracy": 0.45, "leaked_fraction": 0.1, "questions": 1000, "seed": 1},
}


def _parameter_schema(fn_name: str, name: str, hint) -> dict:
    by_name, by_function = _constraints()
    schema = by_function.get(fn_name, {}).get(name) or by_name.get(name)
    return dict(schema) if schema is not None else _schema(hint)


def _explainer_paths() -> dict:
    paths = {}
    for name, fn in PUBLIC.items():
        hints = typing.get_type_hints(fn)
        parameters = inspect.signature(fn).parameters.values()
        properties = {p.name: _parameter_schema(name, p.name, hints.get(p.name)) for p in parameters}
        required = [p.name for p in parameters if p.default is inspect.Parameter.empty]
        summary = (fn.__doc__ or "").strip().splitlines()[0]
        rules = RULES_BEYOND_SCHEMA.get(name, [])
        answers = {"200": json_response("the result", {"type": "object", "properties": {"result": {}}}),
                   "400": error("an argument is missing, unknown, of the wrong type or out of range (named)"
                                + (f", or breaks a rule the schema cannot state ({RULE_KEY})" if rules else ""))}
        described = {"summary": summary, "responses": answers, **({RULE_KEY: rules} if rules else {})}
        item = {"post": {
            "operationId": f"explainers_{name}", **described,
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "properties": properties, "required": required, "additionalProperties": False},
                **({"example": EXAMPLES[name]} if name in EXAMPLES else {})}}},
        }}
        if api.takes_get(name):  # the same rule the route follows: the others answer GET with 405
            item["get"] = {"operationId": f"explainers_{name}_get", **described,
                           "parameters": [{"name": p.name, "in": "query", "required": p.name in required,
                                           "schema": properties[p.name],
                                           **({"example": EXAMPLES[name][p.name]}
                                              if p.name in EXAMPLES.get(name, {}) else {})} for p in parameters]}
        paths[f"/api/explainers/{name}"] = item
    paths["/api/explainers"] = {"get": {"operationId": "explainers_index", "summary": "the public functions",
                                        "responses": {"200": json_response("functions and runtime URLs")}}}
    return paths


def _widget_paths() -> dict:
    """The engine's own widget routes (every document's widgets)."""
    def text(name: str, where: str = "path", required: bool = True) -> dict:
        return {"name": name, "in": where, "required": required, "schema": {"type": "string"}}

    pixels = {"type": "string", "pattern": "^[0-9]{1,6}$"}
    return {
        "/api/widgets/{slug}/{name}": {"get": {
            "operationId": "widget_view", "summary": "a widget's view for the state in the query",
            "parameters": [text("slug"), text("name"),
                           {"name": "width", "in": "query", "schema": pixels,
                            "description": "CSS pixels to lay the figure out for (240 to 1600; default 640)"}],
            "responses": {"200": json_response("summary sentences, scene and numbers"),
                          "404": error("no such document or widget, or one the API does not draw"),
                          "429": error("this client has had many views drawn afresh lately; see Retry-After")}}},
        "/oembed": {"get": {
            "operationId": "oembed", "summary": "oEmbed 1.0 for a widget page URL",
            "parameters": [{**text("url", "query"), "schema": {"type": "string", "minLength": 1}},
                           {"name": "format", "in": "query", "schema": {"enum": ["json"]}},
                           {"name": "maxwidth", "in": "query", "schema": pixels},
                           {"name": "maxheight", "in": "query", "schema": pixels}],
            "responses": {"200": json_response("a rich oEmbed answer"),
                          "400": error("no url, another format, or a size that is not a whole number"),
                          "404": error("the URL is not a widget page of this site")}}},
    }


def document() -> dict:
    paths = {**_explainer_paths(), **_widget_paths()}
    for blueprint in current_app.blueprints.values():
        described = getattr(blueprint, "openapi", {})  # a dict, or a function that makes it (from the data)
        paths.update(described() if callable(described) else described)
    for item in paths.values():  # every route refuses a body over 64 KiB, before anything else
        for operation in (item[method] for method in ("post", "put", "patch") if method in item):
            operation["responses"].setdefault("413", error("the request body is larger than 64 KiB"))
    return {
        "openapi": "3.0.3",
        "info": {"title": "Annotated papers JSON API", "version": explainers.__version__,
                 "description": "Every 4xx is JSON with an error message; bodies over 64 KiB are refused with 413."},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": {"Error": ERROR}},
    }


@bp.get("/api/openapi.json")
def openapi_json():
    # The description follows from the app's routes and its data, both fixed once the app is built, and
    # making it reads every subject's questions: made once per app, on the first request for it.
    described = current_app.extensions.get("openapi")
    if described is None:
        described = current_app.extensions["openapi"] = document()
    return jsonify(described)
