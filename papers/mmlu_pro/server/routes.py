"""HTTP for MMLU-Pro questions and their live scoring.

    GET  /api/mmlu-pro/questions              the categories with their test and validation sizes
    GET  /api/mmlu-pro/questions/<category>   ?split=test&index=N (one question) or ?random=1
    POST /api/mmlu-pro/score                  {"category", "index", "shots": 0-5} for a real test
                                              question: ten-letter probabilities (livescoring's
                                              ``letter`` method) with this paper's prompt
Categories may be written with "-" for the space ("computer-science").
"""
from __future__ import annotations

import random

from flask import Blueprint, abort, jsonify, request

from livescoring import service
from livescoring.model import ModelUnavailable
from livescoring.scorer import PromptTooLong
from livescoring.worker import QueueFull, ScoringTimeout, StillLoading

from .. import prompt
from ..dataset import SPLITS
from . import dataset

bp = Blueprint("mmlu_pro_live", __name__)


def _category(raw: str) -> str:
    name = raw.replace("-", " ")
    if name not in dataset().categories:
        abort(404, description=f"There is no MMLU-Pro category called “{raw}”; see /api/mmlu-pro/questions.")
    return name


def question_json(q) -> dict:
    return {"question_id": q.question_id, "category": q.category, "split": q.split, "index": q.index,
            "src": q.src, "question": q.question, "options": list(q.options), "answer": q.answer}


@bp.get("/api/mmlu-pro/questions")
def categories():
    data = dataset()
    test, validation = data.category_sizes("test"), data.category_sizes("validation")
    return jsonify(categories=[{"name": name, "test": test[name], "validation": validation.get(name, 0)}
                               for name in data.categories])


@bp.get("/api/mmlu-pro/questions/<category>")
def question(category: str):
    name = _category(category)
    split = request.args.get("split", "test")
    if split not in SPLITS:
        abort(400, description=f"split must be one of {', '.join(SPLITS)}")
    rows = dataset().in_category(name, split)
    if request.args.get("random"):
        return jsonify(question_json(random.choice(rows)))
    raw = request.args.get("index", "0")
    if not raw.isdigit() or int(raw) >= len(rows):
        abort(400, description=f"index must be a whole number from 0 to {len(rows) - 1}")
    return jsonify(question_json(rows[int(raw)]))


def _fail(status: int, message: str, field: str | None = None, headers: dict | None = None):
    payload = {"error": message, "status": status} | ({"field": field} if field else {})
    return jsonify(payload), status, headers or {}


@bp.post("/api/mmlu-pro/score")
def score():
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        return _fail(400, "send a JSON object: {\"category\", \"index\", \"shots\"}")
    category, index, shots = body.get("category"), body.get("index", 0), body.get("shots", 5)
    if not isinstance(category, str) or category.replace("-", " ") not in dataset().categories:
        return _fail(400, f"category must be one of {', '.join(dataset().categories)}", "category")
    rows = dataset().in_category(category.replace("-", " "), "test")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(rows):
        return _fail(400, f"index must be a whole number from 0 to {len(rows) - 1}", "index")
    if not isinstance(shots, int) or isinstance(shots, bool) or not 0 <= shots <= prompt.MAX_SHOTS:
        return _fail(400, f"shots must be a whole number from 0 to {prompt.MAX_SHOTS}", "shots")
    q = rows[index]
    try:
        result = service().score(prompt_format=prompt, subject=q.category, question=q.question,
                                 choices=list(q.options), shots=list(dataset().shots(q.category, shots)),
                                 method="letter", key=q.answer)
    except PromptTooLong as error:
        return _fail(400, str(error), "question")
    except QueueFull as error:
        return _fail(429, str(error), headers={"Retry-After": str(error.retry_after)})
    except StillLoading as error:
        return _fail(503, f"{error} Try again in a few seconds.", headers={"Retry-After": "5"})
    except ModelUnavailable as error:
        return _fail(503, f"Live scoring is unavailable: {error}")
    except ScoringTimeout as error:
        return _fail(504, str(error))
    result.update(question=question_json(q))
    return jsonify(result)
