"""Greedy text generation on the live model, streamed piece by piece (a chain of thought, or a short answer).

Generation is a lane of the scoring service's one queue (worker.py): ``ScoringService.generate_until``
checks the request, queues :func:`greedy_steps` under the caller's ``client`` share, and returns
once the worker has taken it up (its first event says how long the prompt is, before the prompt's
forward pass, so a page can say what the model is doing until the first token); the rest streams
back from the worker thread, which runs one forward pass of a generation at a time, between scoring batches and the steps of
other readers' generations. Closing the stream, or dropping it unread, stops the generation between
tokens; so does ``gone()`` (the client left) and the server's stop signal (see worker.py). Nothing is
held across the request: a reader that vanishes costs at most the token being computed.

Decoding is greedy (temperature 0), as the authors' evaluation runs it; generation stops at the
model's end-of-text token, at any of the ``stop`` strings, or after ``max_new_tokens`` tokens, and
the final event says which. The prompt's forward pass computes the language-model head at its last
position only (transformers' ``logits_to_keep=1``, what its own ``generate`` does): logits for
every prompt position would be prompt tokens × 49,152 floats, about 560 MiB for the longest prompt.
"""
from __future__ import annotations

import time
from collections.abc import Iterator

from .greedy import greedy_decode, streamed
from .scorer import PromptTooLong

MAX_NEW_TOKENS = 512  # the cap a caller may ask for: a small model rambles, and every token costs CPU time


def _checked_ids(loaded, prompt: str, max_new_tokens: int):
    """The prompt's token ids [1, n], after the bounds (ValueError) and the context (PromptTooLong)."""
    if not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise ValueError(f"max_new_tokens must be 1 to {MAX_NEW_TOKENS}")
    ids = loaded.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"].to(loaded.device)
    if ids.shape[1] + max_new_tokens > loaded.context_length:
        raise PromptTooLong(f"the prompt has {ids.shape[1]} tokens; with {max_new_tokens} new ones it does not fit "
                            f"the model's {loaded.context_length}")
    return ids


def greedy_steps(loaded, ids, max_new_tokens: int, stop: tuple[str, ...] = (), scorer=None,
                 shared: str = "") -> Iterator[dict | None]:
    """One forward pass per ``next()``: first {"reading": {"prompt_tokens", "cached_tokens"}} before
    any pass (a page shows it until the first token comes), then None or a {"text": piece, "tokens":
    written so far} event, and at the end the events still held back and {"done": True, "reason",
    "tokens", "prompt_tokens", "ms"}.

    With a ``scorer`` and the prompt's ``shared`` leading text (its header and worked examples), the
    prompt's pass runs only its own tokens on top of the scorer's prefix cache (the keys and values
    that scoring keeps for the same text; computed here on first use): ``cached_tokens`` says how
    many were already there. Without them the model reads the whole prompt.

    Text that might be the start of a stop string is held back until it is known not to be one.
    Each pass runs under its own ``torch.inference_mode()``: the worker interleaves several
    generations, so no mode may stay entered across a ``yield``."""
    import torch

    tokenizer, model = loaded.tokenizer, loaded.model
    started = time.perf_counter()
    reuse = scorer is not None and bool(shared)
    cached = scorer.prefixes.entries.get(shared) if reuse else None
    yield {"reading": {"prompt_tokens": int(ids.shape[1]), "cached_tokens": len(cached.token_ids) if cached else 0}}
    state = {}
    with torch.inference_mode():
        if reuse:
            logits, state["past"] = scorer.prefilled(ids[0].tolist(), shared)
        else:
            state["out"] = model(input_ids=ids, use_cache=True, logits_to_keep=1)
            logits = state["out"].logits[0, -1]

    def logits_after(token: int):
        with torch.inference_mode():
            if reuse:
                after, state["past"] = scorer.extended(token, state["past"])
                return after
            state["out"] = model(input_ids=torch.tensor([[token]], device=ids.device), cache=state["out"].cache,
                                 use_cache=True)
            return state["out"].logits[0, -1]

    # The key/value cache goes before the last events.
    step = yield from streamed(greedy_decode(tokenizer, logits, logits_after, max_new_tokens, stop), stop,
                               finished=state.clear)
    yield {"done": True, "reason": step.reason, "tokens": len(step.written), "prompt_tokens": int(ids.shape[1]),
           "ms": round((time.perf_counter() - started) * 1000, 1)}


def stream_greedy(loaded, prompt: str, max_new_tokens: int, stop: tuple[str, ...] = ()) -> Iterator[dict]:
    """Generate in this thread: {"text": piece} events as the model writes, then the done event
    (see greedy_steps). The bounds and the context are checked on the first ``next()``."""
    ids = _checked_ids(loaded, prompt, max_new_tokens)
    for event in greedy_steps(loaded, ids, max_new_tokens, stop):
        if event is not None:
            yield event
