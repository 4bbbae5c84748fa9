"""One work budget for every request that starts the model, checked before the model runs.

A request's work is counted in characters the model reads (measured on CPU with SmolLM2: about
1.2 to 1.4 ms of CPU per work character when nothing is cached):

* the prompt's characters, once;
* twice each scored continuation's characters (each is read against the whole prompt);
* GENERATED_TOKEN_CHARS per token a generation may write (each new token is a forward pass of its own).

One request may cost at most SCORER_MAX_WORK_CHARS (16,000 by default, a little above the costliest
real MMLU question scored by option at 5 shots; 0 switches the budget off). A form that runs the
model several times is budgeted for all its runs (the three-scorers form: twice the limit for six
runs). Over the limit, the route answers 413 naming what to change (fewer worked examples, fewer new
tokens, a shorter question), before the model is loaded or queued.

Used by MMLU's ``POST /api/score`` (benchmarks/mmlu/server/validation.py) and MMLU-Pro's score and
chain of thought (benchmarks/mmlu_pro/server/api.py), and so by every document's form that scores
through them; a form that runs the model several times adds its own budget for all its runs.
"""
from __future__ import annotations

from collections.abc import Callable

from flask import current_app

GENERATED_TOKEN_CHARS = 20  # a new token is a forward pass of its own: about as dear as 20 prompt characters


def work(prompt_chars: int, continuation_chars: int = 0, new_tokens: int = 0) -> int:
    """The work characters of one model run: the prompt, twice the scored continuations, and the
    new tokens a generation may write."""
    return prompt_chars + 2 * continuation_chars + GENERATED_TOKEN_CHARS * new_tokens


def limit(factor: int = 1) -> int:
    """This app's limit per request (SCORER_MAX_WORK_CHARS) times ``factor``; 0 or less: none."""
    return factor * current_app.config["SCORER_MAX_WORK_CHARS"]


def within(cost: int, most: int) -> bool:
    return most <= 0 or cost <= most


def most_that_fit(cost_of: Callable[[int], int], most: int, high: int, low: int = 0) -> int | None:
    """The largest n in [low, high] whose ``cost_of(n)`` (growing with n) is within ``most``; None if none is."""
    return next((n for n in range(high, low - 1, -1) if within(cost_of(n), most)), None)


def max_new_tokens(prompt_chars: int, most: int, cap: int) -> int:
    """The most new tokens (up to ``cap``) a generation after a prompt this long may write within ``most``."""
    if most <= 0:
        return cap
    return max(0, min(cap, (most - prompt_chars) // GENERATED_TOKEN_CHARS))
