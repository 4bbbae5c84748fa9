"""Greedy decoding, one token at a time: the loop that the batch scorer (scorer.py) and the streamed
generation (generate.py) share, so that both write the same tokens and stop for the same reasons.

The caller owns the model: it hands in the context's last logits and ``logits_after(token)``, one
forward pass with that token appended (on whatever cache it keeps). Between tokens the caller may
stop (a cancelled batch) or stream what is written so far; the next forward pass runs only when the
caller asks for the next step. Standard library only (logits are any tensor with ``argmax``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class GreedyStep:
    written: tuple[int, ...]  # the token ids written so far
    text: str  # their text (cut before the first stop string once one appears)
    reason: str | None  # None while writing; then "end of text", "stop" or "length"


def greedy_decode(tokenizer, logits, logits_after: Callable[[int], object], max_new_tokens: int,
                  until: tuple[str, ...] = ()) -> Iterator[GreedyStep]:
    """One step per token, as lm-evaluation-harness's greedy ``generate_until`` writes them: the most
    likely token each time; the end-of-text token ends the text unwritten; the text is cut before the
    first of ``until`` that it contains; at most ``max_new_tokens`` tokens. The last step has a reason."""
    until = tuple(s for s in until if s)
    written: list[int] = []
    text = ""
    while True:
        token = int(logits.argmax())
        if token == tokenizer.eos_token_id:
            yield GreedyStep(tuple(written), text, "end of text")
            return
        written.append(token)
        text = tokenizer.decode(written, skip_special_tokens=True)
        cut = min((text.find(s) for s in until if s in text), default=-1)
        if cut >= 0:
            yield GreedyStep(tuple(written), text[:cut], "stop")
            return
        if len(written) >= max_new_tokens:
            yield GreedyStep(tuple(written), text, "length")
            return
        yield GreedyStep(tuple(written), text, None)
        logits = logits_after(token)
