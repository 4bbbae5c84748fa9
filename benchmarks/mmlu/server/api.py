"""HTTP for live scoring of MMLU questions: the JSON API, mounted by the site under ``/api``.

    POST /api/score                  score one question (JSON; see validation.score_arguments)
    GET  /api/questions              the subjects, with their test and val sizes
    GET  /api/questions/<subject>    ?split=test&index=N (one question), ?random=1, or
                                     ?offset=0&limit=50 (a page of short previews)

The two GET routes are the shared route factory's (benchmarks/server/task_api.py) on MMLU's task and
reader; the score is MMLU's own (a real question, its options rotated or not, or the reader's own
question, by any of the methods).

The API counts a split's questions from 0 (``index``), as the CSV rows are; a document's form numbers
them from 1, as a reader counts, and posts through :func:`run_score`. A result carries ``reading``
(benchmarks/server/reading.py): whether the prediction was a coin toss, and why, in words.
"""
from __future__ import annotations

import time

from flask import current_app, jsonify

from benchmarks.server import live
from benchmarks.server.api_docs import described
from benchmarks.server.failures import ScoreFailed
from benchmarks.server.reading import in_words
from benchmarks.server.task_api import Benchmark, json_body, task_blueprint
from engine.openapi import RULE_KEY
from engine.security import require_same_origin

from ..data import DataMissing
from ..prompt import MAX_SHOTS
from ..task import TASK
from . import dataset as data
from .reader import MMLUData
from .validation import (
    MAX_CHOICE_CHARS,
    MAX_QUESTION_CHARS,
    METHODS,
    QUESTION_SPLITS,
    InvalidRequest,
    TooCostly,
    check_budget,
    score_arguments,
)

TOO_LONG_FOR_THE_MODEL = ("The question and its options are longer than the model can read, even with no worked "
                          "examples; shorten them.")


_TEXT = {"type": "string", "minLength": 1}


def openapi() -> dict:
    """This blueprint's routes for /api/openapi.json (engine/openapi.py calls this for each document:
    the subjects are listed from the data, when it is installed)."""
    try:
        subjects = sorted(data().subjects)
        largest = max(len(data().questions(name, split)) for name in subjects for split in QUESTION_SPLITS) - 1
    except (DataMissing, ValueError):
        subjects, largest = [], None
    subject = {"type": "string", "enum": subjects} if subjects else _TEXT
    index = {"type": "integer", "minimum": 0, **({"maximum": largest} if largest is not None else {})}
    common = {"subject": subject, "shots": {"type": "integer", "minimum": 0, "maximum": MAX_SHOTS},
              "method": {"enum": list(METHODS)}}
    text = {**_TEXT, "pattern": r"\S"}  # not only spaces
    real = {"type": "object", "required": ["subject", "index"],
            "properties": {**common, "split": {"enum": list(QUESTION_SPLITS)}, "index": index,
                           "rotation": {"type": "integer", "minimum": 0, "maximum": 3}}}
    own = {"type": "object", "required": ["subject", "question", "choices"], "properties": {
        **common, "question": {**text, "maxLength": MAX_QUESTION_CHARS},
        "choices": {"type": "array", "minItems": 4, "maxItems": 4, "items": {**text, "maxLength": MAX_CHOICE_CHARS}},
        "answer": {"enum": ["", "A", "B", "C", "D"]}}}
    return {"/api/score": {"post": {
        "operationId": "score", "summary": "score one MMLU question, a real one or the reader's own",
        RULE_KEY: ["index must be one of the chosen subject and split's questions (the schema's maximum is the "
                   "largest subject's)"],
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"oneOf": [real, own]},  # a real question by its index, or the reader's own: not both
            "example": {"subject": subjects[0] if subjects else "astronomy", "split": "test", "index": 0, "shots": 0}}}},
        "responses": {
            "200": described("probabilities, prediction, prompt and timings", {"type": "object"}),
            "400": described(f"a field is wrong (named in field), or breaks a rule the schema cannot state ({RULE_KEY})"),
            "403": described("sent from another site's page"),
            "413": described("too costly to score; the message says what to shorten"),
            "429": described("the queue is full; see Retry-After"),
            "503": described("the model or the subject's data is unavailable, or still loading"),
            "504": described("scoring took longer than SCORER_TIMEOUT_S")}}},
        "/api/questions": {"get": {
            "operationId": "subjects", "summary": "the subjects with their sizes", "responses": {
                "200": described("subjects", {"type": "object"}), "503": described("the MMLU files are not installed")}}},
        "/api/questions/{subject}": {"get": {
            "operationId": "questions", "summary": "one question, a random one, or a page of previews",
            "parameters": [{"name": "subject", "in": "path", "required": True, "schema": {"type": "string"}},
                           {"name": "split", "in": "query", "schema": {"enum": list(QUESTION_SPLITS)}},
                           {"name": "index", "in": "query", "schema": {"type": "string"}},
                           {"name": "random", "in": "query", "schema": {"enum": ["1"]}},
                           {"name": "offset", "in": "query", "schema": {"type": "string"}},
                           {"name": "limit", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": described("the question(s)", {"type": "object"}), "400": described("a bad parameter"),
                          "404": described("unknown subject"), "503": described("the subject's file is unavailable")}}},
    }




def run_score(body) -> dict:
    """Validate, queue, wait; return the result with split, index and timings, or raise ScoreFailed."""
    started = time.perf_counter()
    try:
        arguments = score_arguments(body, data())
        # Before the queue: a request too costly to run never reaches the worker.
        check_budget(arguments, current_app.config["SCORER_MAX_WORK_CHARS"])
    except TooCostly as error:
        raise ScoreFailed(413, str(error), problems=error.problems) from None
    except InvalidRequest as error:
        raise ScoreFailed(400, str(error), problems=error.problems) from None
    except DataMissing as error:
        raise ScoreFailed(503, str(error)) from None
    split, index, rotation = arguments.pop("split"), arguments.pop("index"), arguments.pop("rotation")
    result = live.score(words=TOO_LONG_FOR_THE_MODEL, **arguments)
    result.update(split=split, index=index, rotation=rotation, **in_words(result),
                  ms=round((time.perf_counter() - started) * 1000, 1))
    return result


def question_json(question) -> dict:
    return {"subject": question.subject, "split": question.split, "index": question.index,
            "question": question.question, "choices": list(question.choices), "answer": question.answer}


def subject_json(data: MMLUData, name: str) -> dict:
    """A subject as GET /api/questions lists it, its sizes from subjects.csv (a damaged file leaves the list whole)."""
    s = data.subjects[name]
    return {"name": s.name, "title": s.title, "group": s.group, "test": s.sizes["test"], "val": s.sizes["val"]}


# The factory's question routes (benchmarks/server/task_api.py: the subjects, one question, a page of
# previews); the score is MMLU's own: a real question, rotated or not, or the reader's own, by any method.
BENCHMARK = Benchmark(task=TASK, reader=data, question_json=question_json, browse_splits=QUESTION_SPLITS,
                      group_json=subject_json, previews=True, score_route=False)
bp = task_blueprint(BENCHMARK)


@bp.post("/score")
def score():
    require_same_origin()
    try:
        result = run_score(json_body())
    except ScoreFailed as failure:
        return failure.response()
    return jsonify(result)


bp.openapi = openapi  # MMLU's own description of its routes, for /api/openapi.json (engine/openapi.py)
