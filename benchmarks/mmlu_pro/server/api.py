"""HTTP for MMLU-Pro questions and their live scoring: the JSON API, under the prefix the site
registers ``bp`` at (``url_prefix``; the routes below are relative to it).

    GET  /questions              the categories with their test and validation sizes
    GET  /questions/<category>   ?split=test&index=N (one question) or ?random=1
    POST /score                  {"category", "index", "shots": 0-5} for a real test question:
                                 ten-letter probabilities (livescoring's ``letter`` method) with the
                                 paper's prompt
    POST /generate               {"category", "index", "shots": 0-5, "max_tokens": 1-512}: the paper's
                                 chain-of-thought protocol, streamed as JSON lines (the prompt;
                                 {"reading": {"prompt_tokens", "cached_tokens"}} before the first
                                 token; the text as it is written, with the tokens so far; then the
                                 letter the paper's extraction reads, whether it is the key, and why
                                 it stopped, in words)

A document's question browser scores through :func:`score_question` and :func:`written_answer`.
Each request that starts the model (score, generate, and a page's POST in either mode) is first
held to the work budget of benchmarks/server/budget.py (the prompt's characters, the letters it
compares, the new tokens it may write): over it, a 413 names what fits (fewer worked examples, fewer
new tokens), before the model is loaded or queued.
Categories may be written with "-" for the space ("computer-science"). The API's ``index`` counts a
category's questions from 0. A score result carries ``reading`` (benchmarks/server/reading.py): whether the
prediction was a coin toss, and why, in words.
"""
from __future__ import annotations

import json
import random

from flask import Blueprint, Response, abort, current_app, jsonify, request, stream_with_context, url_for

from benchmarks.server import budget, live
from benchmarks.server.api_docs import described, path_of
from benchmarks.server.failures import SERVICE_ERRORS, Problem, ScoreFailed
from benchmarks.server.multiple_choice import SHARED_PART_KINDS, continuations
from benchmarks.server.reading import in_words, why_it_stopped
from engine.openapi import RULE_KEY
from engine.security import require_same_origin
from livescoring.generate import MAX_NEW_TOKENS

from .. import answer, prompt
from ..data import SPLITS
from . import dataset

bp = Blueprint("mmlu_pro_live", __name__)


def openapi() -> dict:
    """This blueprint's routes for /api/openapi.json (called for each document: the categories come
    from the data, when it is installed; the API takes both spellings, "computer science" and
    "computer-science")."""
    try:
        categories = list(dataset().categories)
        largest = max(dataset().category_sizes("test").values()) - 1
    except Exception:  # noqa: BLE001 - without the data the document still describes the routes
        categories, largest = [], None
    category = ({"type": "string", "enum": sorted({*categories, *(c.replace(" ", "-") for c in categories)})}
                if categories else {"type": "string", "minLength": 1})
    index = {"type": "integer", "minimum": 0, **({"maximum": largest} if largest is not None else {})}
    question = {"category": category, "index": index,
                "shots": {"type": "integer", "minimum": 0, "maximum": prompt.MAX_SHOTS}}
    example = {"category": categories[0] if categories else "math", "index": 0, "shots": 0}
    rules = {RULE_KEY: ["index must be one of the chosen category's test questions (the schema's maximum is the "
                        "largest category's)"]}
    refused = {"400": described(f"a field is wrong (named in field), or breaks a rule the schema cannot state ({RULE_KEY})"),
               "403": described("sent from another site's page"),
               "413": described("the request body is larger than 64 KiB, or the question would cost more work than one "
                              "request may (the message says what to shorten)"),
               "429": described("busy; see Retry-After"),
               "503": described("the model or the data is unavailable, or still loading")}
    return {
        path_of("mmlu_pro_live.categories"): {"get": {
            "operationId": "mmlu_pro_categories", "summary": "the categories with their test and validation sizes",
            "responses": {"200": described("categories", {"type": "object"}),
                          "503": described("the MMLU-Pro files are missing")}}},
        path_of("mmlu_pro_live.question"): {"get": {
            "operationId": "mmlu_pro_question", "summary": "one question of a category, or a random one",
            "parameters": [{"name": "category", "in": "path", "required": True, "schema": {"type": "string"}},
                           {"name": "split", "in": "query", "schema": {"enum": list(SPLITS)}},
                           {"name": "index", "in": "query", "schema": {"type": "string"}},
                           {"name": "random", "in": "query", "schema": {"enum": ["1"]}}],
            "responses": {"200": described("the question", {"type": "object"}), "400": described("a bad parameter"),
                          "404": described("unknown category"), "503": described("the MMLU-Pro files are missing")}}},
        path_of("mmlu_pro_live.score"): {"post": {
            "operationId": "mmlu_pro_score", "summary": "ten-letter probabilities for a real test question", **rules,
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["category"], "properties": question}, "example": example}}},
            "responses": {"200": described("probabilities, prediction, prompt and timings", {"type": "object"}),
                          **refused}}},
        path_of("mmlu_pro_live.generate_answer"): {"post": {
            "operationId": "mmlu_pro_generate",
            "summary": "the paper's chain-of-thought protocol, streamed as JSON lines", **rules,
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["category"],
                "properties": {**question, "max_tokens": {"type": "integer", "minimum": 1,
                                                          "maximum": MAX_NEW_TOKENS}}},
                "example": {**example, "max_tokens": 64}}}},
            "responses": {"200": {"description": "JSON lines: the prompt, the text as written, the extracted letter",
                                  "content": {"application/x-ndjson": {"schema": {"type": "string"}}}}, **refused}}},
    }


bp.openapi = openapi  # collected into /api/openapi.json (engine/openapi.py)


def _category(raw: str) -> str:
    name = raw.replace("-", " ")
    if name not in dataset().categories:
        abort(404, description=f"There is no MMLU-Pro category called “{raw}”; see {url_for('mmlu_pro_live.categories')}.")
    return name


def question_json(q) -> dict:
    return {"question_id": q.question_id, "category": q.category, "split": q.split, "index": q.index,
            "src": q.src, "question": q.question, "options": list(q.options), "answer": q.answer}


@bp.get("/questions")
def categories():
    data = dataset()
    test, validation = data.category_sizes("test"), data.category_sizes("validation")
    return jsonify(categories=[{"name": name, "test": test[name], "validation": validation.get(name, 0)}
                               for name in data.categories])


@bp.get("/questions/<category>")
def question(category: str):
    name = _category(category)
    split = request.args.get("split", "test")
    if split not in SPLITS:
        abort(400, description=f"split must be one of {', '.join(SPLITS)}")
    rows = dataset().in_category(name, split)
    if request.args.get("random"):
        return jsonify(question_json(random.choice(rows)))
    raw = request.args.get("index", "0")
    if not (raw.isascii() and raw.isdigit()) or int(raw) >= len(rows):
        abort(400, description=f"index must be a whole number from 0 to {len(rows) - 1}")
    return jsonify(question_json(rows[int(raw)]))


def _whole(value, name: str, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= high:
        raise ScoreFailed(400, f"{name} must be a whole number from 0 to {high}", name)
    return value


def check_budget(q, shots: int, new_tokens: int = 0, tokens_field: str | None = None) -> None:
    """Raise ScoreFailed(413) when this run would cost more than one request may (budget.py's rule):
    the letter prompt and its ten letters, or (``new_tokens`` > 0) the chain-of-thought prompt and the
    tokens it may write. The message names the shots, and the new tokens where the request chose them
    (``tokens_field``: the API's max_tokens), that would fit."""
    most = budget.limit()
    reasoning = new_tokens > 0
    letters = 0 if reasoning else sum(len(c) for c in continuations("letter", q.options))

    def prompt_chars(k: int) -> int:
        return len(prompt.build_prompt(q.category, q.question, q.options, dataset().shots(q.category, k),
                                       chain_of_thought=reasoning))

    def cost(k: int) -> int:
        return budget.work(prompt_chars(k), letters, new_tokens)

    spent = cost(shots)
    if budget.within(spent, most):
        return
    fixes, words, field = [], [], "shots"
    fits = budget.most_that_fit(cost, most, shots - 1) if shots else None
    if fits is not None:
        if fits == 0:
            fixes.append("use no worked examples (shots 0)")
            words.append("choose 0 worked examples")
        else:
            examples = f"{fits} worked example{'s' if fits != 1 else ''}"
            fixes.append(f"use {examples} or fewer (shots)")
            words.append(f"choose {examples} or fewer")
    tokens = budget.max_new_tokens(prompt_chars(shots), most, new_tokens - 1) if tokens_field else 0
    if tokens >= 1:
        fixes.append(f"ask for at most {tokens} new tokens ({tokens_field})")
        field = field if fits is not None else tokens_field
    if reasoning and not tokens_field:
        words.append("score the option letters without reasoning first")
    if not fixes:
        fixes.append("pick a shorter question")
        words.append("choose a shorter question (another number, or another category)")
    run = (f"a chain of thought after a {prompt_chars(shots):,}-character prompt, writing up to {new_tokens} new "
           f"tokens at about {budget.GENERATED_TOKEN_CHARS} characters each" if reasoning else
           f"a {prompt_chars(shots):,}-character prompt plus twice the {letters} characters of the letters it compares")
    message = (f"This request would have the model read about {spent:,} characters ({run}, with {shots} worked "
               f"example{'s' if shots != 1 else ''}); the limit per request is {most:,}. To fit: {'; or '.join(fixes)}.")
    said = (f"This is more than the model may read for one answer here: about {spent:,} characters, and the limit "
            f"is {most:,}. To fit: {'; or '.join(words)}.")
    raise ScoreFailed(413, message, problems=(Problem(field, message, said),))


def score_question(category, index, shots) -> dict:
    """Score one real test question with the letter prompt; the result gains the question itself."""
    q = _question(category, index)
    shots = _whole(shots, "shots", prompt.MAX_SHOTS)
    check_budget(q, shots)  # before the queue: a request too costly to run never loads the model
    result = live.score(prompt_format=prompt, subject=q.category, question=q.question, choices=list(q.options),
                        shots=list(dataset().shots(q.category, shots)), method="letter", key=q.answer)
    # The chain of thought shares nothing with the letter prompt (another instruction, worked examples
    # with their reasoning): read its prompt now, while the reader reads the letters' result, so that
    # "Let it reason first" finds it in the model's cache (issue 40; docs/performance.md).
    live.read_ahead(*cot_prompt(q, shots))
    return result | {"question": question_json(q), **in_words(result)}


def cot_prompt(q, shots: int) -> tuple[str, str]:
    """The paper's chain-of-thought prompt of ``q`` with ``shots`` worked examples, and its leading
    part (header and worked examples) that every question of the category shares."""
    parts = prompt.cot_prompt_parts(q.category, q.question, q.options, dataset().shots(q.category, shots))
    return "".join(part.text for part in parts), "".join(part.text for part in parts if part.kind in SHARED_PART_KINDS)


@bp.post("/score")
def score():
    require_same_origin()  # a page of another site may not spend this server's model
    body = request.get_json(silent=True)
    try:
        if not isinstance(body, dict):
            raise ScoreFailed(400, "send a JSON object: {\"category\", \"index\", \"shots\"}")
        result = score_question(body.get("category"), body.get("index", 0), body.get("shots", 5))
    except ScoreFailed as failure:
        return failure.response()
    return jsonify(result)


DEFAULT_COT_TOKENS = 256  # enough for a short chain of thought; a small model rambles past it
STOP = "Question:"  # the authors' code cuts a chain of thought where the model starts another question


def _question(category, index):
    if not isinstance(category, str) or category.replace("-", " ") not in dataset().categories:
        raise ScoreFailed(400, f"category must be one of {', '.join(dataset().categories)}", "category")
    rows = dataset().in_category(category.replace("-", " "), "test")
    return rows[_whole(index, "index", len(rows) - 1)]


def start_generation(category, index, shots, max_tokens, tokens_field: str | None = "max_tokens"):
    """The paper's chain-of-thought run of one test question: (question, prompt, shots used, events).

    Budgeted first (check_budget; ``tokens_field`` names the request's field for the new tokens, None
    where the reader cannot choose them). Worked examples are dropped from the end while the prompt
    does not fit, as the authors' code does."""
    q = _question(category, index)
    shots = _whole(shots, "shots", prompt.MAX_SHOTS)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or not 1 <= max_tokens <= MAX_NEW_TOKENS:
        raise ScoreFailed(400, f"max_tokens must be a whole number from 1 to {MAX_NEW_TOKENS}", "max_tokens")
    check_budget(q, shots, max_tokens, tokens_field)  # before the model is loaded or queued
    for k in range(shots, -1, -1):
        # The header and worked examples are the category's for every question: the model reads them
        # once and keeps them (the scorer's prefix cache), so a second question starts in a second.
        text, shared = cot_prompt(q, k)
        try:
            return q, text, k, live.generation(text, max_tokens, stop=(STOP,), shared=shared)
        except ScoreFailed as failure:
            if k == 0 or failure.status != 400:
                raise
    raise AssertionError("unreachable: k reaches 0 above")


def finished(q, written: str, event: dict, cap: int) -> dict:
    """The closing event with the paper's extraction and, in words, why the model stopped."""
    found = answer.extract_answer(written, len(q.options))
    return event | {"extracted": found.letter, "rule": found.rule, "key": q.answer,
                    "correct": None if found.letter is None else found.letter == q.answer,
                    "stopped": why_it_stopped(event["reason"], cap, f"“{STOP}”")}


@bp.post("/generate")
def generate_answer():
    require_same_origin()  # a page of another site may not spend this server's model
    body = request.get_json(silent=True)
    try:
        if not isinstance(body, dict):
            raise ScoreFailed(400, "send a JSON object: {\"category\", \"index\", \"shots\", \"max_tokens\"}")
        cap = body.get("max_tokens", DEFAULT_COT_TOKENS)
        q, text, used, events = start_generation(body.get("category"), body.get("index", 0), body.get("shots", 5), cap)
    except ScoreFailed as failure:
        return failure.response()

    def lines():
        yield json.dumps({"question": question_json(q), "prompt": text, "shots_used": used}) + "\n"
        written = ""
        try:
            for event in events:
                if "done" in event:
                    yield json.dumps(finished(q, written, event, cap)) + "\n"
                    continue
                written += event.get("text", "")
                yield json.dumps(event) + "\n"  # {"reading": …} before the first token, then {"text", "tokens"}
        except Exception as error:  # noqa: BLE001 - the stream has begun: the reader gets the reason as its last line
            if isinstance(error, SERVICE_ERRORS):  # the service's own stops (another reader let in, the server stopping)
                current_app.logger.info("chain-of-thought generation stopped: %s", error)
            else:
                current_app.logger.exception("chain-of-thought generation failed")
            yield json.dumps({"error": f"Generation stopped: {error}", "stopped": live.cut_short(error)}) + "\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(lines()), mimetype="application/x-ndjson", headers=headers)


def written_answer(category, index, shots) -> dict:
    """The whole chain of thought at once, for the page without JavaScript (the script streams it)."""
    q, _text, used, events = start_generation(category, index, shots, DEFAULT_COT_TOKENS, tokens_field=None)
    written, last = live.written(events)
    return finished(q, written, last, DEFAULT_COT_TOKENS) | {"text": written, "shots_used": used}
