"""Turn a score request (JSON from the API, or the page's form) into checked Scorer arguments.

Every problem raises :class:`InvalidRequest` naming the field, so the reader knows what to fix.
"""
from __future__ import annotations

from livescoring.scorer import METHODS, Scorer

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


class TooCostly(InvalidRequest):
    """A valid request whose scoring would cost more than one request may (a 413)."""


def work_chars(arguments: dict) -> tuple[int, int, int]:
    """(work, prompt characters, continuation characters) of a score request.

    The model reads the prompt once, then each continuation after it; a continuation's
    characters count twice because each is read against the whole prompt (measured on CPU with
    SmolLM2: about 1.2 to 1.4 ms per work character either way). For method letter the
    continuations are " A" … " D".
    """
    text = prompt.build_prompt(arguments["subject"], arguments["question"], arguments["choices"], arguments["shots"])
    continuations = sum(len(c) for c in Scorer.continuation_texts(arguments["method"], arguments["choices"]))
    return len(text) + 2 * continuations, len(text), continuations


def check_budget(arguments: dict, limit: int) -> None:
    """Raise TooCostly, saying what to shorten, when a request's work is over ``limit``.

    The default limit (SCORER_MAX_WORK_CHARS, 16,000) is a little above the costliest real MMLU
    question (high_school_european_history, 5 shots, method option: 15,760), so every real
    question can be scored in every setting.
    """
    if limit <= 0:
        return
    work, prompt_chars, continuation_chars = work_chars(arguments)
    if work <= limit:
        return
    own = arguments.get("index") is None
    ways = ["shorten the question or the choices" if own else "pick a shorter question",
            "use fewer worked examples (shots)"]
    if arguments["method"] != "letter":
        ways.append("use method letter, which reads each option as one letter")
    raise TooCostly(
        "question" if own else "shots",
        f"This request would have the model read about {work:,} characters (a {prompt_chars:,}-character prompt "
        f"plus twice the {continuation_chars:,} characters of the continuations it compares); the limit per "
        f"request is {limit:,}, about {work - limit:,} fewer. To fit: {'; '.join(ways)}.",
    )


def _whole_number(field: str, value, low: int, high: int) -> int:
    # isascii first: "²" and "①" are isdigit() but not int()-able.
    if isinstance(value, str) and value.strip().isascii() and value.strip().lstrip("-").isdigit():
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
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (\ud800 in JSON): no tokenizer can read it
        raise InvalidRequest(field, f"{field} holds a character that is not valid Unicode text "
                                    "(a lone surrogate); remove it") from None
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
