"""A multiple-choice question asked of the model through its narrow interface (livescoring/scorer.py).

The model service knows contexts and continuations; the rules of a multiple-choice task are here,
shared by every benchmark, its batch command and its pages. A question is a dict: ``prompt_format``
(any object with ``prompt_parts(subject, question, choices, shots)`` returning parts with ``kind``
and ``text``: a benchmark's prompt module), ``subject``, ``question``, ``choices`` (2 to 10, lettered
A, B, …), ``shots`` (worked examples), ``method``, ``key`` (the answer's letter, or None) and
``delimiter`` (default " "); a generative question adds ``until`` and ``max_new_tokens``. Methods:

* ``letter`` (lm-evaluation-harness's default multiple-choice task for the benchmark): after the
  prompt ending in "Answer:", the log-likelihoods of the continuations " A", " B", …; the softmax
  over the K letters is the letter distribution and its argmax the prediction.
* ``option`` (full-option log-likelihood): the continuation is the option's own text, " {choice}",
  its log-likelihood the sum of its tokens' (explainers.option_logprob); the best one is picked
  with explainers.pick_option.
* ``generative`` (the batch command's): greedy generation (``generate_until``), read by the
  benchmark's filter.

A request's ``delimiter`` is the harness's target delimiter, what comes between the prompt and the
letter or option text: a space, and nothing after a chat template (whose header ends in a line break).
When a few-shot prompt does not fit the model's context, whole worked examples are dropped from the
end (the original code lowered k until the prompt fit; :func:`prepare` asks the model's
``token_count``) and the result says so. The prompt's header and worked examples are the requests'
``shared`` text: the model keeps their keys and values for the next question of the subject.

``prepare`` (fit the prompt, make the requests), the model's answers, then ``read`` (the result:
plain JSON-ready data) are the three steps; :func:`answer_questions` runs them on a Scorer for a
batch, benchmarks/server/live.py on the app's service.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import explainers
from livescoring.scorer import GENERATE_MAX_NEW_TOKENS, Generation, Loglikelihood, PromptTooLong

METHODS = ("letter", "option")
GENERATIVE = "generative"  # greedy generation; the caller reads the answer from the text (its benchmark's filter)
LETTERS = "ABCDEFGHIJ"  # up to ten options
SHARED_PART_KINDS = ("header", "shot")  # leading prompt parts every question of a subject and k shares


def letters(choices) -> str:
    if not 2 <= len(choices) <= len(LETTERS):
        raise ValueError(f"a question needs 2 to {len(LETTERS)} options, got {len(choices)}")
    return LETTERS[:len(choices)]


def continuations(method: str, choices, delimiter: str = " ") -> list[str]:
    """What is scored after the prompt: the delimiter, then the letter or the option's text."""
    if method == "letter":
        return [f"{delimiter}{letter}" for letter in letters(choices)]
    return [f"{delimiter}{choice}" for choice in choices]


@dataclass
class Prepared:
    """One question with its prompt fitted: the parts, and the model's requests."""

    question: dict
    parts: list
    requests: list  # Loglikelihood, one per choice; or one Generation
    started: float

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.parts)

    @property
    def shared(self) -> str:
        """The leading header and worked examples: what the other questions of the subject share."""
        shared = []
        for part in self.parts:
            if part.kind not in SHARED_PART_KINDS:
                break
            shared.append(part.text)
        return "".join(shared)


def prepare(model, question: dict) -> Prepared:
    """The question's prompt with as many of its worked examples as fit the model's context, and its
    requests. ``model``: a Scorer or the app's ScoringService (``token_count``, ``context_length``).

    Shots are dropped from the end of the list (keeping the first k − 1 dev examples, as the original
    code did by lowering k); PromptTooLong when even none leave room."""
    started = time.perf_counter()
    method = question.get("method", "letter")
    if method not in (*METHODS, GENERATIVE):
        raise ValueError(f"method must be one of {', '.join(METHODS)}")
    generative = method == GENERATIVE
    max_new = int(question.get("max_new_tokens", GENERATE_MAX_NEW_TOKENS))
    texts = [] if generative else continuations(method, question["choices"], question.get("delimiter", " "))
    shots = list(question.get("shots", ()))
    for k in range(len(shots), -1, -1):
        parts = question["prompt_format"].prompt_parts(question["subject"], question["question"], question["choices"],
                                                       shots[:k])
        text = "".join(p.text for p in parts)
        needed = model.token_count(text, texts) + (max_new if generative else 0)
        if needed <= model.context_length:
            prepared = Prepared(question, parts, [], started)
            prepared.requests = ([Generation(text, tuple(question.get("until", ())), max_new, prepared.shared)]
                                 if generative else [Loglikelihood(text, t, prepared.shared) for t in texts])
            return prepared
    limit = model.context_length
    if generative:
        raise PromptTooLong(f"the question and its choices with {max_new} new tokens take more than the model's "
                            f"context of {limit} tokens even with no worked examples; shorten them")
    raise PromptTooLong(f"the question and its choices take more than the model's context of {limit} tokens even "
                        "with no worked examples; shorten them")


def _common(prepared: Prepared, facts: dict) -> dict:
    question = prepared.question
    return {
        "method": question.get("method", "letter"),
        "model": facts,
        "subject": question["subject"],
        "shots_requested": len(question.get("shots", ())),
        "shots_used": sum(1 for part in prepared.parts if part.kind == "shot"),
        "prompt": {"text": prepared.text, "parts": [{"kind": part.kind, "text": part.text} for part in prepared.parts]},
    }


def read(prepared: Prepared, answers: list, facts: dict) -> dict:
    """The question's result from the model's answers to its requests (``facts``: the model's,
    Scorer.model_facts); see docs/live-scoring.md for its fields."""
    question = prepared.question
    ms = round((time.perf_counter() - prepared.started) * 1000, 1)
    if question.get("method") == GENERATIVE:
        (answer,) = answers
        return {**_common(prepared, facts), "generated": answer.text, "stopped": answer.stopped,
                "tokens": list(answer.tokens),
                "token_counts": {"prompt": answer.context_tokens, "generated": len(answer.tokens)}, "model_ms": ms}
    choices, key = question["choices"], question.get("key")
    lettered = letters(choices)
    logprobs = [answer.logprob for answer in answers]
    probabilities = dict(zip(lettered, explainers.softmax(logprobs), strict=True))
    if question.get("method", "letter") == "letter":
        prediction = explainers.predict(probabilities)
    else:
        prediction = explainers.pick_option({letter: list(answer.token_logprobs)
                                             for letter, answer in zip(lettered, answers, strict=True)})
    return {
        **_common(prepared, facts),
        "options": [
            {"letter": letter, "choice": choice, "continuation": request.continuation,
             "tokens": len(answer.token_logprobs), "logprob": answer.logprob, "probability": probabilities[letter]}
            for letter, choice, request, answer in zip(lettered, choices, prepared.requests, answers, strict=True)
        ],
        "probabilities": probabilities,
        "prediction": prediction,
        "confidence": probabilities[prediction],
        "key": key,
        "correct": None if key is None else prediction == key,
        # How much of the whole vocabulary's probability the K continuations hold: a model that
        # would rather write something else ("The") puts little mass on them.
        "vocabulary_share": sum(math.exp(lp) for lp in logprobs),
        "top_next_tokens": [{"token": token, "probability": p} for token, p in answers[0].next_tokens],
        "token_counts": {"prompt": answers[0].context_tokens,
                         "continuations": {letter: len(answer.token_logprobs)
                                           for letter, answer in zip(lettered, answers, strict=True)}},
        "model_ms": ms,
    }


def answer_questions(scorer, questions: Sequence[dict], stop: Callable[[], bool] | None = None) -> list[dict]:
    """Several questions on one Scorer (the batch command's and bench/'s): every question's requests
    in one ``loglikelihood`` call (one ``generate_until`` for the generative ones), so that those
    sharing a prompt prefix share forward passes; each result is what the question gets alone.
    ``stop`` is asked between forward passes."""
    prepared = [prepare(scorer, question) for question in questions]
    facts = scorer.model_facts()
    answers: dict[int, list] = {}
    for generative, ask in ((False, "loglikelihood"), (True, "generate_until")):
        mine = [i for i, p in enumerate(prepared) if (p.question.get("method") == GENERATIVE) == generative]
        if not mine:
            continue
        got = iter(getattr(scorer, ask)([r for i in mine for r in prepared[i].requests], stop))
        for i in mine:
            answers[i] = [next(got) for _ in prepared[i].requests]
    return [read(p, answers[i], facts) for i, p in enumerate(prepared)]


def answer_question(scorer, **question) -> dict:
    """One question on a Scorer (:func:`answer_questions` for one)."""
    (result,) = answer_questions(scorer, [question])
    return result
