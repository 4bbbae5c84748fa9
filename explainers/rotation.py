"""The rotation check: does a model pick an answer, or a position?

A multiple-choice question is asked K times with its options rotated cyclically (the key moves with
its text). A model that reads the options picks the same option text every time; a model that
favours a position ("always A") picks a different text in every rotation. Zheng et al. 2023
("Large Language Models Are Not Robust Multiple Choice Selectors", arXiv 2309.03882) measure this
selection bias by permuting the options; this is the cyclic special case, which moves every option
to every position exactly once.

Answers are compared as the options' *original* letters (the letter each option had before
rotation), so "the same answer in every rotation" means the same option text.
"""
from __future__ import annotations

from . import checks

LETTERS = "ABCDEFGHIJ"


def rotate_options(choices: list[str], shift: int) -> list[str]:
    """The options with each moved ``shift`` places down, the last ones wrapping to the top.

    ["w", "x", "y", "z"] shifted by 1 → ["z", "w", "x", "y"]: the option that was A is now B.
    """
    choices = list(choices)
    n = len(choices)
    if not 2 <= n <= len(LETTERS):
        raise ValueError(f"choices must hold 2 to {len(LETTERS)} options, got {n}")
    shift = checks.whole("shift", shift, minimum=0) % n
    return choices[n - shift:] + choices[:n - shift]


def rotated_letter(letter: str, shift: int, options: int) -> str:
    """Where the option lettered ``letter`` sits after a rotation by ``shift``: ("A", 1, 4) → "B"."""
    return LETTERS[(_index(letter, options) + checks.whole("shift", shift, minimum=0)) % options]


def original_letter(letter: str, shift: int, options: int) -> str:
    """The letter the option now at ``letter`` had before a rotation by ``shift``: ("B", 1, 4) → "A"."""
    return LETTERS[(_index(letter, options) - checks.whole("shift", shift, minimum=0)) % options]


def rotation_metrics(answers: list[list[str]], keys: list[str]) -> dict:
    """How a run holds up when the options move. ``answers[i]`` is question i's answer in each
    rotation (as original letters: the option text chosen), ``keys[i]`` its key (an original letter).

    * ``consistent``: the share of questions answered with the same option in every rotation;
    * ``accuracy_all_rotations``: the share answered right in every rotation (a question counts only
      when its answer does not depend on where the options stand);
    * ``accuracy_first_rotation``: the plain accuracy (the options as published);
    * ``accuracy_mean``: the accuracy averaged over the rotations;
    * and the counts behind them: ``consistent_count``, ``all_rotations_count``,
      ``first_rotation_count`` (questions) and ``right_count`` (right answers in all rotations).
    """
    keys = checks.labels("keys", keys)
    if not isinstance(answers, list) or len(answers) != len(keys):
        raise ValueError("answers must be a list with one list of answers per key")
    rotations = {len(a) for a in answers}
    if len(rotations) != 1 or min(rotations) < 1:
        raise ValueError("every question needs the same number (1 or more) of rotations' answers")
    (k,) = rotations
    n = len(keys)
    consistent = sum(1 for a in answers if len(set(a)) == 1)
    all_right = sum(1 for a, key in zip(answers, keys, strict=True) if all(x == key for x in a))
    first_right = sum(1 for a, key in zip(answers, keys, strict=True) if a[0] == key)
    right = sum(1 for a, key in zip(answers, keys, strict=True) for x in a if x == key)
    return {"questions": n, "rotations": k, "consistent": consistent / n, "consistent_count": consistent,
            "accuracy_all_rotations": all_right / n, "all_rotations_count": all_right,
            "accuracy_first_rotation": first_right / n, "first_rotation_count": first_right,
            "accuracy_mean": right / (n * k), "right_count": right}


def _index(letter: str, options: int) -> int:
    options = checks.whole("options", options)
    if not 2 <= options <= len(LETTERS):
        raise ValueError(f"options must be from 2 to {len(LETTERS)}, got {options}")
    if not isinstance(letter, str) or letter not in LETTERS[:options]:
        raise ValueError(f"letter must be one of {', '.join(LETTERS[:options])}, got {letter!r}")
    return LETTERS.index(letter)
