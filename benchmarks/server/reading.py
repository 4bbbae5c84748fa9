"""A scored question in plain words for the pages that show it: the method's name, the worked
examples that did not fit (:func:`in_words`), and whether it was a real choice (:func:`reading`).

A small model often "predicts" a letter it barely prefers, or one among letters it would rather
not write at all. The pages point out both, each with its rule:

- its two likeliest letters are close: of the probability the model gives those two, the first
  gets less than ``CLOSE_SPLIT`` (a split closer than 55:45);
- (letter method only) the letters together hold less than ``LETTERS_SHARE`` of the model's
  probability for its next token: it would rather write something else, often end its turn, and
  the comparison is among tokens it hardly considers.

The numbers come from ``explainers.top_two`` and the scorer's result; every live route adds
``in_words(result)`` (which holds ``reading(result)``) to what it returns. A generation's end is said
in words by :func:`why_it_stopped`.
"""
from __future__ import annotations

import explainers

CLOSE_SPLIT = 0.55
LETTERS_SHARE = 0.5
METHOD_TITLES = {"letter": "Letter probabilities", "option": "Full-option log-likelihood"}


def shots_note(result: dict) -> str | None:
    """Why fewer worked examples were used than asked for, or None when all were."""
    dropped = result["shots_requested"] - result["shots_used"]
    if not dropped:
        return None
    return (f"{dropped} worked example{'s' if dropped != 1 else ''} dropped: the prompt did not fit the "
            f"model's context of {result['model']['context_length']} tokens")


def in_words(result: dict) -> dict:
    """The fields a page adds to a scorer's result: the method's title, the shots note, the reading."""
    return {"method_title": METHOD_TITLES[result["method"]], "shots_note": shots_note(result),
            "reading": reading(result)}


def shown_token(text: str) -> str:
    """A token as the pages print it: a space as ␣, a line break as \\n."""
    return text.replace("\n", "\\n").replace(" ", "␣")


def _percent(p: float) -> str:
    return f"{p * 100:.1f}%"


def reading(result: dict) -> dict:
    """What a scorer result means: {"close", "split", "letters_off", "rule", "headline", "notes"};
    ``headline`` and ``notes`` are None and [] for a clear choice."""
    pair = explainers.top_two(result["probabilities"])
    close = pair["split"] < CLOSE_SPLIT
    notes = []
    if close:
        notes.append(
            f"A coin toss between {pair['first']} ({_percent(pair['first_probability'])}) and {pair['second']} "
            f"({_percent(pair['second_probability'])}): of what the model gives these two letters, {pair['first']} "
            f"gets {_percent(pair['split'])}. A split closer than {CLOSE_SPLIT * 100:.0f}:{100 - CLOSE_SPLIT * 100:.0f} "
            "counts as a coin toss here: the prediction is barely a choice."
        )
    share = result.get("vocabulary_share")
    letters_off = result["method"] == "letter" and share is not None and share < LETTERS_SHARE
    if letters_off:
        letters = list(result["probabilities"])
        named = f"letters {letters[0]} to {letters[-1]}"
        likeliest = result["top_next_tokens"][0]
        continuations = {option["continuation"] for option in result["options"]}
        elsewhere = (
            f"its likeliest next token is “{shown_token(likeliest['token'])}” ({_percent(likeliest['probability'])}), "
            "not a letter" if likeliest["token"] not in continuations else "the rest is spread over other tokens"
        )
        notes.append(
            f"The {named} hold only {_percent(share)} of the model's probability for its next token "
            f"(under {LETTERS_SHARE * 100:.0f}% counts as mostly elsewhere here); {elsewhere}. It would rather "
            "write something else than answer, so its pick is made among tokens it hardly considers."
        )
    headline = ("A coin toss, not a choice" if close else
                "Most of the model's probability is on no letter at all" if letters_off else None)
    return {"close": close, "split": pair["split"], "letters_off": letters_off,
            "rule": {"close_below": CLOSE_SPLIT, "letters_below": LETTERS_SHARE}, "headline": headline, "notes": notes}


def why_it_stopped(reason: str, cap: int, stop: str, meaning: str = "it began another question",
                   cap_note: str = "") -> str:
    """Why a generation ended (its closing event's ``reason``), in words that follow "stopped because":
    the model's end-of-text token, a stop sequence (``stop``, as the reader should see it, and what
    writing it ``meaning``), or the ``cap`` of new tokens (``cap_note`` after it: whose cap it is)."""
    return {"end of text": "it ended its answer (the model's end-of-text token)",
            "stop": f"{meaning} ({stop}), where the protocol ends the answer",
            "length": f"it reached the cap of {cap} new tokens{cap_note}"}[reason]
