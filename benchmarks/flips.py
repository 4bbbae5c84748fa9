"""Two runs of a multiple-choice benchmark question by question: each question's answers, paired.

The counting is ``explainers.flips``'s; this module reads what each run answered and pairs the
questions. Sans I/O, standard library only: it runs on the server (the published runs) and in the
reader's browser (their own files, read by the gate's reader, ``benchmarks.runs``).

A run's answers come from

- this project's ``evaluate`` rows (benchmarks/runfile.py): group (subject or MMLU-Pro's category),
  split, index, prediction, key, probabilities, correct. They hold no question text; the server
  adds it for the published runs from the dataset;
- lm-evaluation-harness ``--log_samples`` lines: ``doc`` (question, choices, answer), ``target``,
  ``filtered_resps`` (one [log-likelihood, greedy] per option for a letter task, whose softmax over
  the options is the probability shown, or the filtered text of a generative task) and the
  per-document score the gate reads.

Whether an answer was right is the gate's own reading (``runs.read_run``), so the counts here are
the gate's numbers. Two runs of one tool are paired by question (the gate's pairing); two runs
whose questions are named differently (a site run against harness logs, or a letter task's logs
against a generative task's) are matched by subject and question text with its options, when both
runs carry the text, or refused with the reason.
"""
from __future__ import annotations

import json
import math
import string
from collections.abc import Iterable
from dataclasses import dataclass

from . import registry
from .runfile import LEGACY_DEFAULTS, group_field
from .runs import RunFormatError, benchmark_of_task, read_run, subject_of_task, task_of_file

LETTERS = string.ascii_uppercase


@dataclass(frozen=True, slots=True)  # slots: the published runs hold 56,168 of them
class Answer:
    """One run's answer to one question."""

    subject: str  # the question's group: MMLU's subject, MMLU-Pro's category
    split: str
    index: int | None  # the question's row in its subject's split, from 0 (None: the run does not say)
    key: str  # the key's letter
    answer: str | None  # the letter answered (None: no letter)
    probabilities: dict | None  # {letter: probability}, None for a generative answer
    correct: bool
    question: str | None = None
    choices: tuple[str, ...] | None = None
    benchmark: str | None = None  # the benchmark's name (registry), None where the run does not say
    shots: int | None = None


def answer_of_row(row: dict, question: str | None = None, choices: tuple[str, ...] | None = None) -> Answer:
    """An ``evaluate`` row (the shared schema) as an Answer, with the question's text where known."""
    group = group_field(row)
    probabilities = row.get("probabilities")
    return Answer(subject=row[group], split=row.get("split", LEGACY_DEFAULTS["split"]), index=row.get("index"),
                  key=row.get("key"), answer=row.get("prediction") or None,
                  probabilities=probabilities if isinstance(probabilities, dict) else None,
                  correct=bool(row.get("correct")), question=question, choices=choices,
                  benchmark=registry.of_group_field(group), shots=row.get("shots"))


def _letter(value: object, options: int) -> str | None:
    """A harness target or answer as a letter: an option's number, or a letter written as text."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < options:
        return LETTERS[value]
    if isinstance(value, str):
        text = value.strip().strip("().").upper()
        if len(text) == 1 and text in LETTERS[:max(options, 1)]:
            return text
    return None


def harness_answer(row: dict, subject: str, correct: bool, benchmark: str | None = None) -> Answer:
    """One harness --log_samples line as an Answer (``correct``: the gate's reading of its metric;
    ``benchmark``: the one its task belongs to, where known)."""
    doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
    choices = doc.get("choices") if isinstance(doc.get("choices"), list) else None
    options = len(choices) if choices else 4
    key = _letter(doc.get("answer"), options) or _letter(row.get("target"), options) or "?"
    responses = row.get("filtered_resps")
    probabilities, answer = None, None
    if isinstance(responses, list) and responses and all(
            isinstance(r, list) and r and isinstance(r[0], (int, float)) for r in responses):
        # A letter (log-likelihood) task: one [log-likelihood, greedy] per option.
        logs = [float(r[0]) for r in responses]
        top = max(logs)
        weights = [math.exp(x - top) for x in logs]
        total = math.fsum(weights)
        probabilities = {LETTERS[i]: w / total for i, w in enumerate(weights)}
        answer = LETTERS[logs.index(top)]
    elif isinstance(responses, list) and responses and isinstance(responses[0], str):
        answer = _letter(responses[0], options)  # a generative task: its filtered answer
    elif isinstance(responses, str):
        answer = _letter(responses, options)
    question = doc.get("question") if isinstance(doc.get("question"), str) else None
    return Answer(subject=subject, split="test", index=None, key=key, answer=answer, probabilities=probabilities,
                  correct=correct, question=question,
                  choices=tuple(str(c) for c in choices) if choices else None, benchmark=benchmark)


def read_answers(files: list[tuple[str, str]]) -> tuple[str, dict]:
    """(format, {question key: Answer}) of one run's files, given as (file name, text): the gate's
    reader checks the files and scores each question; its keys name the questions."""
    run = read_run(files)
    found: dict = {}
    for name, text in files:
        file_task = task_of_file(name)
        for line in text.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)  # read_run has read every line already: each is an object
            if run.format == "harness":
                task = row.get("task", file_task)
                key = ("harness", task, row["doc_id"])
                found[key] = harness_answer(row, subject_of_task(task), run.scores[key] == 1.0, benchmark_of_task(task))
            else:
                key = ("evaluate", row[group_field(row)], row.get("split", LEGACY_DEFAULTS["split"]), row["index"])
                found[key] = answer_of_row({**row, "correct": run.scores[key] == 1.0})
    return run.format, found


def _text_key(answer: Answer) -> tuple:
    return answer.subject, " ".join(answer.question.split()), tuple(" ".join(c.split()) for c in answer.choices)


def _by_text(answers: Iterable[Answer]) -> dict:
    """Answers by (subject, question, options); a text that two questions share is left out (ambiguous)."""
    found: dict = {}
    for answer in answers:
        found.setdefault(_text_key(answer), []).append(answer)
    return {key: same[0] for key, same in found.items() if len(same) == 1}


def pair_answers(production: tuple[str, dict], candidate: tuple[str, dict]) -> dict:
    """The questions both runs answered: {"pairs": [(production Answer, candidate Answer)], "dropped":
    questions in one run only, "matched_by": "question" or "text"}.

    Runs of one tool whose questions share names are paired by name, in the gate's order; otherwise
    both must carry question text (harness logs do; this site's evaluate rows do not), and questions
    are matched by subject, question and options (a text two questions share is left out)."""
    (format_a, a), (format_b, b) = production, candidate
    shared = sorted(a.keys() & b.keys()) if format_a == format_b else []
    if len(shared) >= 2:
        return {"pairs": [(a[k], b[k]) for k in shared], "dropped": len(a) + len(b) - 2 * len(shared),
                "matched_by": "question"}
    without = [name for name, (fmt, run) in (("production", production), ("candidate", candidate))
               if any(x.question is None or x.choices is None for x in run.values())]
    if without:
        tools = {"evaluate": "this site's evaluate output", "harness": "harness sample logs"}
        raise RunFormatError(
            f"the two runs name their questions differently ({tools[format_a]} and {tools[format_b]}), so they can "
            f"only be matched by subject and question text, and the {' and '.join(without)} run holds no question "
            f"text (an evaluate file names a question by subject and row number only); compare two runs of the "
            f"same tool, or two harness runs, whose logs hold each question")
    texts_a, texts_b = _by_text(a.values()), _by_text(b.values())
    common = sorted(texts_a.keys() & texts_b.keys())
    if len(common) < 2:
        raise RunFormatError(f"the two runs share {len(common)} question(s) by subject and text; at least 2 are needed")
    return {"pairs": [(texts_a[k], texts_b[k]) for k in common], "dropped": len(a) + len(b) - 2 * len(common),
            "matched_by": "text"}


def key_probability(answer: Answer) -> float | None:
    """The probability the run gave the key (None without probabilities)."""
    if answer.probabilities is None:
        return None
    return answer.probabilities.get(answer.key, 0.0)


def answer_probability(answer: Answer) -> float | None:
    """The probability the run gave its own answer (None without probabilities or answer)."""
    if answer.probabilities is None or answer.answer is None:
        return None
    return answer.probabilities.get(answer.answer, 0.0)
