"""Read the chosen letter out of a model's chain of thought, the paper's way (§4).

The authors' code (TIGER-AI-Lab/MMLU-Pro commit 05c6997, ``evaluate_from_local.py``) tries, in order:
"answer is (X)" with optional brackets; then "Answer: X" (the last one on the first line that has one); then the last
capital letter A–J anywhere in the text; and counts a random option when all three fail. Here the
letter must also name one of the question's options (a nine-option question has no J), and instead
of drawing the random option the result says that none was found, so the page can say the paper
would have guessed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .data import LETTERS

RULES = (
    ("answer is (X)", re.compile(r"answer is \(?([A-J])\)?")),
    ("Answer: X", re.compile(r".*[aA]nswer:\s*([A-J])")),  # no DOTALL, as in the authors' code: the first line that has one
    ("last letter", re.compile(r"[A-J](?=[^A-J]*$)")),
)


@dataclass(frozen=True)
class Extracted:
    letter: str | None  # None: no rule found one of the question's letters
    rule: str  # which rule found it, or "none: the paper counts a random option"


def extract_answer(text: str, options: int = len(LETTERS)) -> Extracted:
    """The letter the paper's extraction reads from ``text`` for a question with ``options`` options."""
    allowed = LETTERS[:options]
    for name, pattern in RULES:
        match = pattern.search(text)
        if match:
            letter = match.group(1) if pattern.groups else match.group(0)
            if letter in allowed:
                return Extracted(letter, name)
    return Extracted(None, "none: the paper counts a random option")
