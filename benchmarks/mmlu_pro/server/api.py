"""HTTP for MMLU-Pro questions and their live scoring: the JSON API, under the prefix the site
registers ``bp`` at (``url_prefix``; the routes below are relative to it). ``bp`` is the shared
route factory's (benchmarks/server/task_api.py: the questions, a real question's letter score with
the paper's prompt, their checks, budget and OpenAPI), given MMLU-Pro's task and reader; what is
MMLU-Pro's own is its chain of thought:

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

from flask import Response, current_app, request, stream_with_context

from benchmarks.server import live, task_api
from benchmarks.server.api_docs import path_of
from benchmarks.server.failures import SERVICE_ERRORS, ScoreFailed
from benchmarks.server.multiple_choice import SHARED_PART_KINDS
from benchmarks.server.reading import why_it_stopped
from benchmarks.server.task_api import Benchmark, check_budget, question_of, task_blueprint, whole
from engine.security import require_same_origin
from livescoring.generate import MAX_NEW_TOKENS

from .. import answer, prompt
from ..data import SPLITS
from ..task import TASK
from . import dataset


def question_json(q) -> dict:
    return {"question_id": q.question_id, "category": q.category, "split": q.split, "index": q.index,
            "src": q.src, "question": q.question, "options": list(q.options), "answer": q.answer}


def read_ahead(q, shots: int) -> None:
    """After a letter score: read the question's chain-of-thought prompt while the reader reads the
    letters' result. It shares nothing with the letter prompt (another instruction, worked examples
    with their reasoning), so "Let it reason first" then finds it in the model's cache (issue 40;
    docs/performance.md)."""
    live.read_ahead(*cot_prompt(q, shots))


BENCHMARK = Benchmark(task=TASK, reader=dataset, question_json=question_json, browse_splits=SPLITS,
                      url_group=lambda category: category.replace(" ", "-"), after_score=read_ahead)
bp = task_blueprint(BENCHMARK)


def score_question(category, index, shots) -> dict:
    """Score one real test question with the letter prompt (task_api.score_question)."""
    return task_api.score_question(BENCHMARK, category, index, shots)


def cot_prompt(q, shots: int) -> tuple[str, str]:
    """The paper's chain-of-thought prompt of ``q`` with ``shots`` worked examples, and its leading
    part (header and worked examples) that every question of the category shares."""
    parts = prompt.cot_prompt_parts(q.category, q.question, q.options, dataset().shots(q.category, shots))
    return "".join(part.text for part in parts), "".join(part.text for part in parts if part.kind in SHARED_PART_KINDS)


DEFAULT_COT_TOKENS = 256  # enough for a short chain of thought; a small model rambles past it
STOP = "Question:"  # the authors' code cuts a chain of thought where the model starts another question


def start_generation(category, index, shots, max_tokens, tokens_field: str | None = "max_tokens"):
    """The paper's chain-of-thought run of one test question: (question, prompt, shots used, events).

    Budgeted first (task_api.check_budget; ``tokens_field`` names the request's field for the new tokens, None
    where the reader cannot choose them). Worked examples are dropped from the end while the prompt
    does not fit, as the authors' code does."""
    q = question_of(BENCHMARK, category, index)
    shots = whole(shots, "shots", prompt.MAX_SHOTS)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or not 1 <= max_tokens <= MAX_NEW_TOKENS:
        raise ScoreFailed(400, f"max_tokens must be a whole number from 1 to {MAX_NEW_TOKENS}", "max_tokens")

    def prompt_chars(k: int) -> int:
        return len(prompt.build_prompt(q.category, q.question, q.options, dataset().shots(q.category, k),
                                       chain_of_thought=True))

    # before the model is loaded or queued
    check_budget(prompt_chars, shots, new_tokens=max_tokens, tokens_field=tokens_field, group_word="category")
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


def openapi() -> dict:
    """The factory's routes (task_api.openapi) and the chain of thought's, for /api/openapi.json."""
    described_routes = task_api.openapi(BENCHMARK, bp.name)
    score = described_routes[path_of(f"{bp.name}.score")]["post"]
    body = score["requestBody"]["content"]["application/json"]
    return {**described_routes, path_of(f"{bp.name}.generate_answer"): {"post": {
        "operationId": "mmlu_pro_generate",
        "summary": "the paper's chain-of-thought protocol, streamed as JSON lines", **task_api.rules("category"),
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["category"],
            "properties": {**body["schema"]["properties"],
                           "max_tokens": {"type": "integer", "minimum": 1, "maximum": MAX_NEW_TOKENS}}},
            "example": {**body["example"], "max_tokens": 64}}}},
        "responses": {"200": {"description": "JSON lines: the prompt, the text as written, the extracted letter",
                              "content": {"application/x-ndjson": {"schema": {"type": "string"}}}},
                      **task_api.refusals()}}}}


bp.openapi = openapi  # collected into /api/openapi.json (engine/openapi.py)


def written_answer(category, index, shots) -> dict:
    """The whole chain of thought at once, for the page without JavaScript (the script streams it)."""
    q, _text, used, events = start_generation(category, index, shots, DEFAULT_COT_TOKENS, tokens_field=None)
    written, last = live.written(events)
    return finished(q, written, last, DEFAULT_COT_TOKENS) | {"text": written, "shots_used": used}
