"""Turn a score request (JSON from the API, or the page's form) into checked Scorer arguments.

Every problem raises :class:`InvalidRequest` holding :class:`~benchmarks.server.failures.Problem` s: each
names the field as the API does, for programs, and says the same in the form's words, for readers
(the form numbers questions from 1, the API's ``index`` from 0). The reader's own question and
options are checked together, so the form can mark every empty or overlong one at once.
"""
from __future__ import annotations

import explainers
from benchmarks.server import budget
from benchmarks.server.failures import Problem
from benchmarks.server.multiple_choice import METHODS, continuations

from .. import prompt
from ..data import LETTERS
from ..prompt import MAX_SHOTS
from .reader import MMLUData

MAX_QUESTION_CHARS = 4000
MAX_CHOICE_CHARS = 1000
QUESTION_SPLITS = ("test", "val")  # dev holds the worked examples, so it is not asked


class InvalidRequest(ValueError):
    def __init__(self, *problems: Problem):
        super().__init__(problems[0].message)
        self.problems = problems
        self.field = problems[0].field


class TooCostly(InvalidRequest):
    """A valid request whose scoring would cost more than one request may (a 413)."""


def choice_field(i: int) -> str:
    """The API's name for option i in its messages: "choices[0] (A)"."""
    return f"choices[{i}] ({LETTERS[i]})"


def work_chars(arguments: dict) -> tuple[int, int, int]:
    """(work, prompt characters, continuation characters) of a score request.

    The model reads the prompt once, then each continuation after it; a continuation's
    characters count twice because each is read against the whole prompt (benchmarks/server/budget.py,
    the rule every model route uses). For method letter the continuations are " A" … " D".
    """
    text = prompt.build_prompt(arguments["subject"], arguments["question"], arguments["choices"], arguments["shots"])
    continued = sum(len(c) for c in continuations(arguments["method"], arguments["choices"]))
    return budget.work(len(text), continued), len(text), continued


def check_budget(arguments: dict, limit: int) -> None:
    """Raise TooCostly, saying what to shorten, when a request's work is over ``limit``.

    The default limit (SCORER_MAX_WORK_CHARS, 16,000) is a little above the costliest real MMLU
    question (high_school_european_history, 5 shots, method option: 15,760), so every real
    question can be scored in every setting.
    """
    if limit <= 0:
        return
    work, prompt_chars, continuation_chars = work_chars(arguments)
    if budget.within(work, limit):
        return
    own = arguments.get("index") is None
    ways = ["shorten the question or the choices" if own else "pick a shorter question",
            "use fewer worked examples (shots)"]
    fixes = ["shorten the question or the options" if own else "pick a shorter question",
             "use fewer worked examples"]
    if arguments["method"] != "letter":
        ways.append("use method letter, which reads each option as one letter")
        fixes.append("choose the letter-probabilities scoring method, which reads each option as one letter")
    raise TooCostly(Problem(
        "question" if own else "shots",
        f"This request would have the model read about {work:,} characters (a {prompt_chars:,}-character prompt "
        f"plus twice the {continuation_chars:,} characters of the continuations it compares); the limit per "
        f"request is {limit:,}, about {work - limit:,} fewer. To fit: {'; '.join(ways)}.",
        f"This is more than the model may read for one question here: about {work:,} characters, and the "
        f"limit is {limit:,}. To fit: {'; or '.join(fixes)}.",
    ))


def _whole_number(field: str, value, low: int, high: int, words: str) -> int:
    # isascii first: "²" and "①" are isdigit() but not int()-able.
    if isinstance(value, str) and value.strip().isascii() and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(Problem(field, f"{field} must be a whole number from {low} to {high}", words))
    if not low <= value <= high:
        raise InvalidRequest(Problem(field, f"{field} must be from {low} to {high}, got {value}", words))
    return value


def _text(field: str, value, limit: int, name: str, fix: str) -> str:
    """A text field, checked; ``name`` is what the form calls it ("Option A"), ``fix`` how to fill it."""
    if not isinstance(value, str):
        raise InvalidRequest(Problem(field, f"{field} must be text", f"{name} must be text."))
    if not value.strip():
        raise InvalidRequest(Problem(field, f"{field} is empty",
                                     f"{name} is empty: {fix}, or choose “A real MMLU question”."))
    if len(value) > limit:
        raise InvalidRequest(Problem(field, f"{field} is {len(value):,} characters long; the limit is {limit:,}",
                                     f"{name} is {len(value):,} characters long; shorten it to {limit:,} or fewer."))
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (\ud800 in JSON): no tokenizer can read it
        raise InvalidRequest(Problem(
            field, f"{field} holds a character that is not valid Unicode text (a lone surrogate); remove it",
            f"{name} holds a character that cannot be read as text; delete it and type it again.")) from None
    return value.strip()


def _own_texts(question, choices) -> tuple[str, list[str]]:
    """The reader's question and four options, each checked; every problem among them is raised together."""
    fields = [("question", question, MAX_QUESTION_CHARS, "The question", "type your question")]
    fields += [(choice_field(i), c, MAX_CHOICE_CHARS, f"Option {letter}", "type an answer")
               for i, (letter, c) in enumerate(zip(LETTERS, choices, strict=True))]
    texts, problems = [], []
    for field in fields:
        try:
            texts.append(_text(*field))
        except InvalidRequest as error:
            problems.extend(error.problems)
    if problems:
        raise InvalidRequest(*problems)
    return texts[0], texts[1:]


def score_arguments(body, data: MMLUData) -> dict:
    """Checked keyword arguments for ScoringService.score, plus "split"/"index" for real questions.

    ``body`` is {subject, shots, method} with either {split, index} (a real question; its key is
    then known), optionally ``rotation`` (0 to 3: its options moved that many places down, the key
    with its text, as ``evaluate --rotations`` asks them), or {question, choices: [four strings]}
    (the reader's own question).
    """
    if not isinstance(body, dict):
        raise InvalidRequest(Problem(
            "body", "send a JSON object with subject, shots and either split and index or question and choices",
            "The form arrived empty; reload the page and try again."))
    subject = body.get("subject")
    if not isinstance(subject, str) or not subject:
        raise InvalidRequest(Problem("subject", "subject is required, e.g. \"college_medicine\"",
                                     "Choose a subject from the list."))
    if subject not in data.subjects:
        raise InvalidRequest(Problem("subject", f"unknown subject {subject!r}; GET /api/questions lists the 57 subjects",
                                     "There is no such subject; choose one from the list."))
    shots = _whole_number("shots", body.get("shots", 0), 0, MAX_SHOTS,
                          f"Choose from 0 to {MAX_SHOTS} worked examples.")
    method = body.get("method", "letter")
    if not isinstance(method, str) or method not in METHODS:  # (a list or an object is not hashable)
        raise InvalidRequest(Problem("method", f"method must be one of {', '.join(METHODS)}",
                                     "Choose a scoring method from the list."))
    own = "question" in body or "choices" in body
    real = "index" in body or "split" in body
    if own and "rotation" in body:
        raise InvalidRequest(Problem("rotation", "rotation moves a real question's options; order your own as you like",
                                     "Moving the options applies to a real question; reorder your own options instead."))
    if own and real:
        raise InvalidRequest(Problem("question", "give either split and index (a real question) "
                                                 "or question and choices (your own), not both",
                                     "Choose either a real question or your own, not both."))
    if not own and not real:
        raise InvalidRequest(Problem("index", "give split and index for a real question, or question and choices for your own",
                                     "Choose a real question by its number, or write your own."))
    arguments = {"prompt_format": prompt, "subject": subject, "method": method,
                 "shots": list(data.questions(subject, "dev")[:shots]), "key": None}
    return _real_question(body, data, arguments) if real else _own_question(body, arguments)


def _real_question(body: dict, data: MMLUData, arguments: dict) -> dict:
    """``arguments`` completed with a real question, chosen by split and index and moved ``rotation``
    places, and its key."""
    subject = arguments["subject"]
    split = body.get("split", "test")
    if split not in QUESTION_SPLITS:
        raise InvalidRequest(Problem(
            "split", f"split must be one of {', '.join(QUESTION_SPLITS)} (dev holds the worked examples)",
            f"Choose the {' or the '.join(QUESTION_SPLITS)} split."))
    count = len(data.questions(subject, split))
    title = data.subjects[subject].title
    index = _whole_number("index", body.get("index"), 0, count - 1,
                          f"Type a question number from 1 to {count:,}: {title} has {count:,} "
                          f"questions in its {split} split.")
    rotation = _whole_number("rotation", body.get("rotation", 0), 0, len(LETTERS) - 1,
                             "Choose how many places to move the options, 0 to 3.")
    question = data.question(subject, split, index)
    return {**arguments, "question": question.question,
            "choices": explainers.rotate_options(list(question.choices), rotation),
            "key": explainers.rotated_letter(question.answer, rotation, len(LETTERS)),
            "split": split, "index": index, "rotation": rotation}


def _own_question(body: dict, arguments: dict) -> dict:
    """``arguments`` completed with the reader's own question, its four options and its answer, if given."""
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) != len(LETTERS):
        raise InvalidRequest(Problem("choices", "choices must be a list of exactly four answers (A, B, C, D)",
                                     "Fill in all four options, A to D."))
    question, choices = _own_texts(body.get("question"), choices)
    answer = body.get("answer")
    if answer not in (None, "", *LETTERS):
        raise InvalidRequest(Problem("answer", "answer, if given, must be one of A, B, C, D",
                                     "Choose the correct answer from A to D, or “not given”."))
    return {**arguments, "question": question, "choices": choices, "key": answer or None,
            "split": None, "index": None, "rotation": 0}
