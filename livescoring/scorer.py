"""Score one multiple-choice question with a causal LM, the way the reference evaluation does.

The scorer knows no dataset: a question comes with its options (K of them, lettered A, B, …) and a
prompt format, any object with ``prompt_parts(subject, question, choices, shots)`` returning parts
with ``kind`` and ``text`` (a paper's prompt module, in its folder under papers/). Two methods:

* ``letter`` (the reference method: lm-evaluation-harness's default multiple-choice task for the
  benchmark, one forward pass, log-softmax at the last position): after the
  prompt ending in "Answer:", compare the log-probabilities of the continuations " A", " B", …
  (a letter that is several tokens gets the sum of its tokens' log-probabilities); the
  softmax over the K letters is the letter distribution and its argmax the prediction.
* ``option`` (full-option log-likelihood): the continuation is the option's own text, " {choice}",
  scored as the sum of its tokens' log-probabilities (explainers.option_logprob); the best one is
  picked with explainers.pick_option.

Tokenisation follows the harness: a context and a continuation are encoded as
``context_ids = encode(context)`` and ``continuation_ids = encode(context + continuation)[len(context_ids):]``,
with no special tokens. When a few-shot prompt does not fit the model's context, whole worked
examples are dropped (the original code lowered k until the prompt fit) and the result says so.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import explainers

METHODS = {
    "letter": "Letter probabilities (the paper's method)",
    "option": "Full-option log-likelihood",
}
TOP_NEXT_TOKENS = 5
LETTERS = "ABCDEFGHIJ"  # up to ten options


class PromptTooLong(ValueError):
    """Even with no worked examples the question does not fit the model's context."""


@dataclass(frozen=True)
class ScoredContinuation:
    letter: str
    text: str  # the continuation scored after the prompt: " A" or " {choice}"
    token_ids: tuple[int, ...]
    token_logprobs: tuple[float, ...]

    @property
    def logprob(self) -> float:
        return explainers.option_logprob(list(self.token_logprobs))


class Scorer:
    """Holds a loaded model; every call is pure inference under torch.inference_mode()."""

    def __init__(self, loaded):
        self.loaded = loaded

    # -- tokenisation -------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        return list(self.loaded.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        """The harness's split: trailing spaces of the context move to the continuation."""
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        context_ids = self.encode(context)
        whole_ids = self.encode(context + continuation)
        return context_ids, whole_ids[len(context_ids):]

    # -- the model ----------------------------------------------------------------------------
    def continuation_logprobs(self, context_ids: list[int], continuations: list[list[int]]):
        """Log-probabilities of each continuation's tokens after the context, from one pass over it.

        The context runs once; its key/value cache is copied for each continuation that has more
        than one token. Also returns the top next tokens after the context.
        """
        import torch

        model, device = self.loaded.model, self.loaded.device
        with torch.inference_mode():
            out = model(torch.tensor([context_ids], device=device), use_cache=True)
            next_logprobs = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
            results = []
            for cont in continuations:
                lps = [next_logprobs[cont[0]].item()]
                if len(cont) > 1:
                    tail = model(torch.tensor([cont[:-1]], device=device), cache=copy.deepcopy(out.cache), use_cache=True)
                    tail_lps = torch.log_softmax(tail.logits[0].float(), dim=-1)
                    lps += [tail_lps[i, token].item() for i, token in enumerate(cont[1:])]
                results.append(lps)
            top = torch.topk(next_logprobs, TOP_NEXT_TOKENS)
            top_tokens = [
                {"token": self.loaded.tokenizer.decode([int(i)]), "probability": math.exp(float(lp))}
                for lp, i in zip(top.values, top.indices, strict=False)
            ]
        return results, top_tokens

    # -- one question -------------------------------------------------------------------------
    @staticmethod
    def letters(choices) -> str:
        if not 2 <= len(choices) <= len(LETTERS):
            raise ValueError(f"a question needs 2 to {len(LETTERS)} options, got {len(choices)}")
        return LETTERS[:len(choices)]

    @classmethod
    def continuation_texts(cls, method: str, choices) -> list[str]:
        if method == "letter":
            return [f" {letter}" for letter in cls.letters(choices)]
        return [f" {choice}" for choice in choices]

    def fit_prompt(self, prompt_format, subject: str, question: str, choices, shots, continuations: list[str]):
        """Build the prompt with as many of the requested shots as fit the model's context.

        Returns (parts, context_ids, continuation_ids). Shots are dropped from the end of the list
        (keeping the first k − 1 dev examples, as the original code did by lowering k).
        """
        limit = self.loaded.context_length
        for k in range(len(shots), -1, -1):
            parts = prompt_format.prompt_parts(subject, question, choices, shots[:k])
            text = "".join(p.text for p in parts)
            pairs = [self.encode_pair(text, cont) for cont in continuations]
            context_ids = pairs[0][0]
            longest = max(len(cont_ids) for _, cont_ids in pairs)
            if len(context_ids) + longest <= limit:
                return parts, context_ids, [cont_ids for _, cont_ids in pairs]
        raise PromptTooLong(
            f"the question and its choices take more than the model's context of {limit} tokens even with no "
            "worked examples; shorten them"
        )

    def score(self, prompt_format, subject: str, question: str, choices, shots: list | tuple = (),
              method: str = "letter", key: str | None = None) -> dict:
        """Score one question; the result is plain JSON-ready data (see the README for fields)."""
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}")
        started = time.perf_counter()
        texts = self.continuation_texts(method, choices)
        letters = self.letters(choices)
        parts, context_ids, continuation_ids = self.fit_prompt(prompt_format, subject, question, choices, list(shots), texts)
        token_logprobs, top_tokens = self.continuation_logprobs(context_ids, continuation_ids)
        scored = [
            ScoredContinuation(letter, text, tuple(ids), tuple(lps))
            for letter, text, ids, lps in zip(letters, texts, continuation_ids, token_logprobs, strict=False)
        ]
        logprobs = [s.logprob for s in scored]
        probabilities = dict(zip(letters, explainers.softmax(logprobs), strict=False))
        if method == "letter":
            prediction = explainers.predict(probabilities)
        else:
            prediction = explainers.pick_option({s.letter: list(s.token_logprobs) for s in scored})
        shots_used = sum(1 for p in parts if p.kind == "shot")
        dropped = len(shots) - shots_used
        return {
            "method": method,
            "method_title": METHODS[method],
            "model": {"name": self.loaded.name, "device": self.loaded.device, "dtype": self.loaded.dtype,
                      "threads": self.loaded.threads, "context_length": self.loaded.context_length},
            "subject": subject,
            "shots_requested": len(shots),
            "shots_used": shots_used,
            "shots_note": (
                f"{dropped} worked example{'s' if dropped != 1 else ''} dropped: the prompt did not fit the "
                f"model's context of {self.loaded.context_length} tokens" if dropped else None
            ),
            "prompt": {"text": "".join(p.text for p in parts), "parts": [{"kind": p.kind, "text": p.text} for p in parts]},
            "options": [
                {"letter": s.letter, "choice": choice, "continuation": s.text, "tokens": len(s.token_ids),
                 "logprob": s.logprob, "probability": probabilities[s.letter]}
                for s, choice in zip(scored, choices, strict=False)
            ],
            "probabilities": probabilities,
            "prediction": prediction,
            "confidence": probabilities[prediction],
            "key": key,
            "correct": None if key is None else prediction == key,
            # How much of the whole vocabulary's probability the K continuations hold: a model that
            # would rather write something else ("The") puts little mass on them.
            "vocabulary_share": sum(math.exp(lp) for lp in logprobs),
            "top_next_tokens": top_tokens,
            "token_counts": {"prompt": len(context_ids), "continuations": {s.letter: len(s.token_ids) for s in scored}},
            "model_ms": round((time.perf_counter() - started) * 1000, 1),
        }
