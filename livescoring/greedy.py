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
    stop_string: str | None = None  # with reason "stop": the one of ``until`` that cut the text


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
        found = min((s for s in until if s in text), key=text.find, default=None)
        if found is not None:
            yield GreedyStep(tuple(written), text[:text.find(found)], "stop", found)
            return
        if len(written) >= max_new_tokens:
            yield GreedyStep(tuple(written), text, "length")
            return
        yield GreedyStep(tuple(written), text, None)
        logits = logits_after(token)


def streamed(steps: Iterator[GreedyStep], until: tuple[str, ...], stream: bool = True,
             finished: Callable[[], None] = lambda: None):
    """A reader's events from :func:`greedy_decode`'s steps: {"text": piece, "tokens": written so far}
    once the text is known not to begin one of ``until`` (text that might is held back), else None
    (a step, so the caller may interleave other work); with ``stream`` False, None for every step.
    ``finished`` runs once the last step is known, before the held-back text goes out (a caller frees
    its key/value cache there). Returns the last step (its reason set)."""
    hold = max((len(s) for s in until if s), default=1) - 1
    shown = 0  # how much of the answer was sent
    for step in steps:
        if step.reason is not None:
            break
        if stream and len(step.text) - hold > shown:
            yield {"text": step.text[shown:len(step.text) - hold], "tokens": len(step.written)}
            shown = len(step.text) - hold
        else:
            yield None
    finished()
    if stream and len(step.text) > shown:
        yield {"text": step.text[shown:], "tokens": len(step.written)}
    return step
