"""Greedy text generation on the live model, streamed piece by piece (a chain of thought, or a short answer).

The scoring service (worker.py) owns the model for scoring in its one thread behind the queue. A
generation streams for many seconds, so it does not go through that queue (it would hold every
scoring request behind it); it runs in the requesting thread instead, one generation at a time for
the whole process (a second one gets QueueFull). PyTorch's forward pass is safe to run from two
threads under ``torch.inference_mode()``, and each call keeps its own key/value cache.

Decoding is greedy (temperature 0), as the authors' evaluation runs it; generation stops at the
model's end-of-text token, at any of the ``stop`` strings, or after ``max_new_tokens`` tokens, and
the final event says which.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from .model import ModelUnavailable
from .scorer import PromptTooLong
from .worker import FAILED, QueueFull, StillLoading

_ONE_AT_A_TIME = threading.Lock()
MAX_NEW_TOKENS = 512  # the cap a caller may ask for: a small model rambles, and every token costs CPU time


def prompt_tokens(loaded, prompt: str) -> int:
    return len(loaded.tokenizer(prompt, add_special_tokens=False)["input_ids"])


def stream_greedy(loaded, prompt: str, max_new_tokens: int, stop: tuple[str, ...] = ()) -> Iterator[dict]:
    """Yield {"text": piece} events as the model writes, then {"done": True, "reason", "tokens", "ms"}.

    Text that might be the start of a stop string is held back until it is known not to be one.
    """
    import torch

    if not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise ValueError(f"max_new_tokens must be 1 to {MAX_NEW_TOKENS}")
    tokenizer, model = loaded.tokenizer, loaded.model
    ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"].to(loaded.device)
    if ids.shape[1] + max_new_tokens > loaded.context_length:
        raise PromptTooLong(f"the prompt has {ids.shape[1]} tokens; with {max_new_tokens} new ones it does not fit "
                            f"the model's {loaded.context_length}")
    started = time.perf_counter()
    hold = max((len(s) for s in stop), default=1) - 1
    written: list[int] = []
    text, shown = "", 0  # the answer so far (none if the first token ends the text) and how much was sent
    reason = "length"
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True)
        while len(written) < max_new_tokens:
            token = int(out.logits[0, -1].argmax())
            if token == tokenizer.eos_token_id:
                reason = "end of text"
                break
            written.append(token)
            text = tokenizer.decode(written, skip_special_tokens=True)
            cut = min((text.find(s) for s in stop if s in text), default=-1)
            if cut >= 0:
                text, reason = text[:cut], "stop"
                break
            if len(text) - hold > shown:
                yield {"text": text[shown:len(text) - hold]}
                shown = len(text) - hold
            out = model(input_ids=torch.tensor([[token]], device=ids.device), cache=out.cache,
                        use_cache=True)
    if len(text) > shown:
        yield {"text": text[shown:]}
    yield {"done": True, "reason": reason, "tokens": len(written), "prompt_tokens": int(ids.shape[1]),
           "ms": round((time.perf_counter() - started) * 1000, 1)}


def generation(service, prompt: str, max_new_tokens: int, stop: tuple[str, ...] = ()) -> Iterator[dict]:
    """Check the service's model is ready and free for a generation, then return the event stream.

    Raises (before any text is produced) ModelUnavailable, StillLoading, QueueFull or PromptTooLong."""
    service.start()
    if service.state == FAILED:
        raise ModelUnavailable(service.message)
    if not service.wait_ready(service.timeout_s):
        if service.state == FAILED:
            raise ModelUnavailable(service.message)
        raise StillLoading(service.message)
    if not _ONE_AT_A_TIME.acquire(blocking=False):
        raise QueueFull(30, "Another reader's answer is being written (this server writes one at a time)")
    try:
        events = stream_greedy(service.scorer.loaded, prompt, max_new_tokens, stop)
        first = next(events)  # runs the checks and the prompt's forward pass now, so errors come before streaming
    except BaseException:
        _ONE_AT_A_TIME.release()
        raise

    def rest() -> Iterator[dict]:
        try:
            yield first
            yield from events
        finally:
            _ONE_AT_A_TIME.release()

    return rest()
