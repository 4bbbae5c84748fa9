"""One route factory for every benchmark's question API: ``task_blueprint(benchmark)``.

It gives the routes a multiple-choice benchmark has, relative to the prefix the site mounts the
blueprint at (the document that scores the benchmark chooses it when it registers the blueprint):

    GET  /questions           the groups, each with its number of questions per split
    GET  /questions/<group>   ?split=…&index=N (one question, counted from 0) or ?random=1, or
                              where the benchmark offers them ?offset=0&limit=50 (a page of previews)
    POST /score               {"<group field>", "index", "shots"}: a real test question's letter
                              probabilities with the benchmark's prompt, and its reading in words
                              (unless the benchmark scores in a route of its own)

with the checks and their 400s in the reader's words (the field named), the work budget (a 413
naming what fits, benchmarks/server/budget.py, before the model is loaded or queued), the model
service's failures as answers (failures.py) and the OpenAPI block for /api/openapi.json. A
benchmark hands it a :class:`Benchmark`: its typed task (benchmarks/task.py), the app's reader and
how a question is shown; the blueprint is the benchmark's to extend with what is its own (MMLU-Pro
adds its chain-of-thought route).
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from flask import Blueprint, abort, current_app, jsonify, request, url_for

from benchmarks.task import MultipleChoiceTask
from engine.openapi import RULE_KEY
from engine.security import require_same_origin

from . import budget, live
from .api_docs import described, path_of
from .failures import Problem, ScoreFailed
from .multiple_choice import continuations
from .reading import in_words


class Reader(Protocol):
    """What the routes ask of a benchmark's reader."""

    def groups(self) -> Sequence[str]: ...  # every group, in the order the API lists them
    def in_group(self, group: str, split: str) -> Sequence: ...  # a group's questions in a split, in order
    def shots(self, group: str, k: int) -> Sequence: ...  # the group's first k worked examples


@dataclass(frozen=True)
class Benchmark:
    """A benchmark as its API serves it: the task, the app's reader, and how its questions are shown."""

    task: MultipleChoiceTask
    reader: Callable[[], Reader]  # the app's reader, asked when a request comes
    question_json: Callable[[object], dict]  # one question as GET /questions/<group> and a score show it
    browse_splits: tuple[str, ...]  # the splits GET /questions/<group> reads (worked examples' included)
    url_group: Callable[[str], str] = field(default=lambda group: group)  # a group as a URL may spell it
    # One group as GET /questions lists it (default: its name and its sizes in browse_splits)
    group_json: Callable[[Reader, str], dict] | None = None
    previews: bool = False  # whether GET /questions/<group> without an index gives a page of previews
    score_route: bool = True  # False: the benchmark serves POST /score itself (MMLU: the reader's own question too)
    default_shots: int = 5
    # After a letter score, what to start while the reader reads it (MMLU-Pro: its chain-of-thought prompt)
    after_score: Callable[[object, int], None] | None = None

    def group_of(self, raw) -> str | None:
        """The group ``raw`` names, in its own or its URL spelling; None for no group."""
        if not isinstance(raw, str):
            return None
        return next((g for g in self.reader().groups() if raw in (g, self.url_group(g))), None)


PREVIEW_CHARS = 140  # a preview's characters of its question
MAX_PAGE = 100  # previews in one page


def whole(value, name: str, high: int) -> int:
    """A JSON field that must be a whole number from 0 to ``high`` (a 400 naming it otherwise)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= high:
        raise ScoreFailed(400, f"{name} must be a whole number from 0 to {high}", name)
    return value


def json_body():
    """The request's JSON, None when it is not JSON; nesting too deep for the parser is a 400."""
    try:
        return request.get_json(silent=True)
    except RecursionError:
        raise ScoreFailed(400, "the JSON body is nested too deeply; send a flat object", field="body") from None


def question_of(benchmark: Benchmark, group, index):
    """The real test question ``index`` of ``group``, each checked (a 400 naming the field)."""
    name = benchmark.group_of(group)
    field_name = benchmark.task.group_field
    if name is None:
        raise ScoreFailed(400, f"{field_name} must be one of {', '.join(benchmark.reader().groups())}", field_name)
    rows = benchmark.reader().in_group(name, "test")
    return rows[whole(index, "index", len(rows) - 1)]


def check_budget(prompt_chars: Callable[[int], int], shots: int, letters: int = 0, new_tokens: int = 0,
                 tokens_field: str | None = None, group_word: str = "group") -> None:
    """Raise ScoreFailed(413) when a run would cost more than one request may (budget.py's rule): a
    prompt of ``prompt_chars(k)`` characters with ``k`` worked examples, the ``letters`` it compares,
    or the ``new_tokens`` it may write. The message names the shots, and the new tokens where the
    request chose them (``tokens_field``: the API's max_tokens), that would fit."""
    most = budget.limit()

    def cost(k: int) -> int:
        return budget.work(prompt_chars(k), letters, new_tokens)

    spent = cost(shots)
    if budget.within(spent, most):
        return
    fits = budget.most_that_fit(cost, most, shots - 1) if shots else None
    fixes, words = _fewer_shots(fits)
    field_name = "shots"
    tokens = budget.max_new_tokens(prompt_chars(shots), most, new_tokens - 1) if tokens_field else 0
    if tokens >= 1:
        fixes.append(f"ask for at most {tokens} new tokens ({tokens_field})")
        field_name = field_name if fits is not None else tokens_field
    if new_tokens and not tokens_field:
        words.append("score the option letters without reasoning first")
    if not fixes:
        fixes.append("pick a shorter question")
        words.append(f"choose a shorter question (another number, or another {group_word})")
    run = (f"a chain of thought after a {prompt_chars(shots):,}-character prompt, writing up to {new_tokens} new "
           f"tokens at about {budget.GENERATED_TOKEN_CHARS} characters each" if new_tokens else
           f"a {prompt_chars(shots):,}-character prompt plus twice the {letters} characters of the letters it compares")
    message = (f"This request would have the model read about {spent:,} characters ({run}, with {shots} worked "
               f"example{'s' if shots != 1 else ''}); the limit per request is {most:,}. To fit: {'; or '.join(fixes)}.")
    said = (f"This is more than the model may read for one answer here: about {spent:,} characters, and the limit "
            f"is {most:,}. To fit: {'; or '.join(words)}.")
    raise ScoreFailed(413, message, problems=(Problem(field_name, message, said),))


def _fewer_shots(fits: int | None) -> tuple[list[str], list[str]]:
    """The fix (for the API) and the words (for a form) when ``fits`` worked examples would fit."""
    if fits is None:
        return [], []
    if fits == 0:
        return ["use no worked examples (shots 0)"], ["choose 0 worked examples"]
    examples = f"{fits} worked example{'s' if fits != 1 else ''}"
    return [f"use {examples} or fewer (shots)"], [f"choose {examples} or fewer"]


def score_question(benchmark: Benchmark, group, index, shots) -> dict:
    """Score one real test question by its letters with the benchmark's prompt; the result gains the
    question itself and its reading in words. Raises ScoreFailed with the answer to give."""
    task, reader = benchmark.task, benchmark.reader()
    doc = question_of(benchmark, group, index)
    shots = whole(shots, "shots", task.max_shots)
    name, choices = getattr(doc, task.group_field), list(task.doc_to_choice(doc))

    def prompt_chars(k: int) -> int:
        return len(task.prompt.build_prompt(name, doc.question, choices, reader.shots(name, k)))

    # Before the queue: a request too costly to run never loads the model.
    check_budget(prompt_chars, shots, letters=sum(len(c) for c in continuations("letter", choices)),
                 group_word=task.group_words[0])
    result = live.score(prompt_format=task.prompt, subject=name, question=doc.question, choices=choices,
                        shots=list(reader.shots(name, shots)), method="letter", key=task.doc_to_target(doc))
    if benchmark.after_score:
        benchmark.after_score(doc, shots)
    return result | {"question": benchmark.question_json(doc), **in_words(result)}


def task_blueprint(benchmark: Benchmark) -> Blueprint:
    """The benchmark's question and score routes as one blueprint, named ``<task name>_live``."""
    task = benchmark.task
    bp = Blueprint(f"{task.name}_live", __name__)
    word, field_name = task.group_words[0], task.group_field

    def group_or_404(raw: str) -> str:
        name = benchmark.group_of(raw)
        if name is None:
            abort(404, description=f"unknown {word} {raw!r}: {task.title} has no {word} of that name; "
                                   f"GET {url_for(f'{bp.name}.groups')} lists them")
        return name

    def sizes(reader: Reader, group: str) -> dict:
        return {"name": group, **{split: len(reader.in_group(group, split)) for split in benchmark.browse_splits}}

    @bp.get("/questions")
    def groups():
        reader = benchmark.reader()
        shown = benchmark.group_json or sizes
        return jsonify({task.groups_option: [shown(reader, g) for g in reader.groups()]})

    @bp.get(f"/questions/<{field_name}>")
    def question(**path):
        name = group_or_404(path[field_name])
        split = request.args.get("split", "test")
        if split not in benchmark.browse_splits:
            abort(400, description=f"split must be one of {', '.join(benchmark.browse_splits)}")
        rows = benchmark.reader().in_group(name, split)
        if request.args.get("random"):
            return jsonify(benchmark.question_json(random.choice(rows)))
        if benchmark.previews and "index" not in request.args:
            return previews(name, split, rows)
        return jsonify(benchmark.question_json(rows[whole_arg("index", 0, 0, len(rows) - 1)]))

    def previews(name: str, split: str, rows: Sequence):
        offset = whole_arg("offset", 0, 0, len(rows) - 1)
        limit = whole_arg("limit", 50, 1, MAX_PAGE)
        return jsonify({field_name: name, "split": split, "count": len(rows), "offset": offset, "items": [
            {"index": q.index, "preview": q.question[:PREVIEW_CHARS] + ("…" if len(q.question) > PREVIEW_CHARS else "")}
            for q in rows[offset:offset + limit]]})

    if benchmark.score_route:
        bp.add_url_rule("/score", "score", score_view(benchmark), methods=["POST"])
    bp.openapi = lambda: openapi(benchmark, bp.name)  # collected into /api/openapi.json (engine/openapi.py)
    return bp


def whole_arg(name: str, default: int, low: int, high: int) -> int:
    """A query parameter that must be a whole number from ``low`` to ``high`` (a 400 naming it otherwise)."""
    raw = request.args.get(name, str(default))
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:  # "²".isdigit() is True
        abort(400, description=f"{name} must be a whole number from {low} to {high}")
    return int(raw)


def score_view(benchmark: Benchmark):
    """POST /score: one real question's letter score (score_question), or the failure's answer."""
    field_name = benchmark.task.group_field

    def score():
        require_same_origin()  # a page of another site may not spend this server's model
        try:
            body = json_body()
            if not isinstance(body, dict):
                raise ScoreFailed(400, f"send a JSON object: {json.dumps([field_name, 'index', 'shots'])[1:-1].join('{}')}")
            result = score_question(benchmark, body.get(field_name), body.get("index", 0),
                                    body.get("shots", benchmark.default_shots))
        except ScoreFailed as failure:
            return failure.response()
        return jsonify(result)

    return score


def openapi(benchmark: Benchmark, name: str) -> dict:
    """The blueprint's routes for /api/openapi.json: the groups come from the data when it is there."""
    task = benchmark.task
    word, plural, field_name = *task.group_words, task.group_field
    try:
        reader = benchmark.reader()
        groups = list(reader.groups())
        largest = max(len(reader.in_group(g, "test")) for g in groups) - 1
    except Exception:  # noqa: BLE001 - without the data the document still describes the routes
        current_app.logger.info("%s's data is not here: its API is described without its %s", task.title, plural)
        groups, largest = [], None
    group = ({"type": "string", "enum": sorted({*groups, *map(benchmark.url_group, groups)})} if groups
             else {"type": "string", "minLength": 1})
    index = {"type": "integer", "minimum": 0, **({"maximum": largest} if largest is not None else {})}
    example = {field_name: groups[0] if groups else "", "index": 0, "shots": 0}
    return {
        path_of(f"{name}.groups"): {"get": {
            "operationId": f"{task.name}_{plural}",
            "summary": f"the {plural} with their {' and '.join(benchmark.browse_splits)} sizes",
            "responses": {"200": described(plural, {"type": "object"}),
                          "503": described(f"the {task.title} files are missing")}}},
        path_of(f"{name}.question"): {"get": {
            "operationId": f"{task.name}_question", "summary": f"one question of a {word}, or a random one",
            "parameters": [{"name": field_name, "in": "path", "required": True, "schema": {"type": "string"}},
                           {"name": "split", "in": "query", "schema": {"enum": list(benchmark.browse_splits)}},
                           {"name": "index", "in": "query", "schema": {"type": "string"}},
                           {"name": "random", "in": "query", "schema": {"enum": ["1"]}}],
            "responses": {"200": described("the question", {"type": "object"}), "400": described("a bad parameter"),
                          "404": described(f"unknown {word}"),
                          "503": described(f"the {task.title} files are missing")}}},
        path_of(f"{name}.score"): {"post": {
            "operationId": f"{task.name}_score", "summary": "the option letters' probabilities for a real test question",
            **rules(word),
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": [field_name], "properties": question_schema(benchmark, group, index)},
                "example": example}}},
            "responses": {"200": described("probabilities, prediction, prompt and timings", {"type": "object"}),
                          **refusals()}}},
    }


def question_schema(benchmark: Benchmark, group: dict, index: dict) -> dict:
    """The properties naming one real question in a request body: its group, index and shots."""
    return {benchmark.task.group_field: group, "index": index,
            "shots": {"type": "integer", "minimum": 0, "maximum": benchmark.task.max_shots}}


def rules(word: str) -> dict:
    """A rule the schema cannot state, for a route that takes a question's index."""
    return {RULE_KEY: [f"index must be one of the chosen {word}'s test questions (the schema's maximum is the "
                       f"largest {word}'s)"]}


def refusals() -> dict:
    """The answers of a route that may start the model, when it does not."""
    return {"400": described(f"a field is wrong (named in field), or breaks a rule the schema cannot state ({RULE_KEY})"),
            "403": described("sent from another site's page"),
            "413": described("the request body is larger than 64 KiB, or the question would cost more work than one "
                             "request may (the message says what to shorten)"),
            "429": described("busy; see Retry-After"),
            "503": described("the model or the data is unavailable, or still loading")}
