"""Turn a score request (JSON from the API, or the page's form) into checked Scorer arguments.

Every problem raises :class:`InvalidRequest` naming the field, so the reader knows what to fix.
"""
from __future__ import annotations

from livescoring.scorer import METHODS

from .. import prompt
from ..dataset import LETTERS, MMLUData
from ..prompt import MAX_SHOTS

MAX_QUESTION_CHARS = 4000
MAX_CHOICE_CHARS = 1000
QUESTION_SPLITS = ("test", "val")  # dev holds the worked examples, so it is not asked


class InvalidRequest(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _whole_number(field: str, value, low: int, high: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(field, f"{field} must be a whole number from {low} to {high}")
    if not low <= value <= high:
        raise InvalidRequest(field, f"{field} must be from {low} to {high}, got {value}")
    return value


def _text(field: str, value, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidRequest(field, f"{field} must be text")
    if not value.strip():
        raise InvalidRequest(field, f"{field} is empty")
    if len(value) > limit:
        raise InvalidRequest(field, f"{field} is {len(value):,} characters long; the limit is {limit:,}")
    return value.strip()


def score_arguments(body, data: MMLUData) -> dict:
    """Checked keyword arguments for ScoringService.score, plus "split"/"index" for real questions.

    ``body`` is {subject, shots, method} with either {split, index} (a real question; its key is
    then known) or {question, choices: [four strings]} (the reader's own question).
    """
    if not isinstance(body, dict):
        raise InvalidRequest("body", "send a JSON object with subject, shots and either split and index or question and choices")
    subject = body.get("subject")
    if not isinstance(subject, str) or not subject:
        raise InvalidRequest("subject", "subject is required, e.g. \"college_medicine\"")
    if subject not in data.subjects:
        raise InvalidRequest("subject", f"unknown subject {subject!r}; GET /api/questions lists the 57 subjects")
    shots = _whole_number("shots", body.get("shots", 0), 0, MAX_SHOTS)
    method = body.get("method", "letter")
    if method not in METHODS:
        raise InvalidRequest("method", f"method must be one of {', '.join(METHODS)}")
    own = "question" in body or "choices" in body
    real = "index" in body or "split" in body
    if own and real:
        raise InvalidRequest("question", "give either split and index (a real question) "
                                         "or question and choices (your own), not both")
    if not own and not real:
        raise InvalidRequest("index", "give split and index for a real question, or question and choices for your own")
    arguments = {"prompt_format": prompt, "subject": subject, "method": method,
                 "shots": list(data.questions(subject, "dev")[:shots]), "key": None}
    if real:
        split = body.get("split", "test")
        if split not in QUESTION_SPLITS:
            raise InvalidRequest("split", f"split must be one of {', '.join(QUESTION_SPLITS)} (dev holds the worked examples)")
        count = len(data.questions(subject, split))
        index = _whole_number("index", body.get("index"), 0, count - 1)
        question = data.question(subject, split, index)
        arguments.update(question=question.question, choices=list(question.choices), key=question.answer)
        return {**arguments, "split": split, "index": index}
    question = _text("question", body.get("question"), MAX_QUESTION_CHARS)
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) != len(LETTERS):
        raise InvalidRequest("choices", "choices must be a list of exactly four answers (A, B, C, D)")
    choices = [_text(f"choices[{i}] ({letter})", c, MAX_CHOICE_CHARS)
               for i, (letter, c) in enumerate(zip(LETTERS, choices, strict=True))]
    answer = body.get("answer")
    if answer not in (None, "", *LETTERS):
        raise InvalidRequest("answer", "answer, if given, must be one of A, B, C, D")
    arguments.update(question=question, choices=choices, key=answer or None)
    return {**arguments, "split": None, "index": None}
