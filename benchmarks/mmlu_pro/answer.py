"""Read the chosen letter out of a model's chain of thought, the paper's way (§4).

The authors' code (TIGER-AI-Lab/MMLU-Pro commit 05c6997, ``evaluate_from_local.py`` and
``evaluate_from_api.py`` alike) tries, in order: "answer is (X)" with optional brackets; then "Answer: X" (the last one
on the first line that has one); then the last capital letter A–J anywhere in the text. When all three fail, the paper
says a random option is counted, but both scripts call ``random.seed(12345)`` before every draw of
``random.randint(0, options - 1)``, so the "guess" is fixed: G for 8 to 10 options, D for 4 to 7, B for 2 or 3
(``FALLBACK``). Here the letter must also name one of the question's options (a nine-option question has no J), and
instead of counting the fixed guess the result says that none was found, so the page can say what the paper's code
would have counted.
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

# random.seed(12345); "ABCDEFGHIJ"[random.randint(0, n - 1)] for each number of options n (checked in the tests)
FALLBACK = {2: "B", 3: "B", 4: "D", 5: "D", 6: "D", 7: "D", 8: "G", 9: "G", 10: "G"}
NONE_FOUND = "none: the authors' code counts its fixed guess"


@dataclass(frozen=True)
class Extracted:
    letter: str | None  # None: no rule found one of the question's letters
    rule: str  # which rule found it, or NONE_FOUND


def extract_answer(text: str, options: int = len(LETTERS)) -> Extracted:
    """The letter the paper's extraction reads from ``text`` for a question with ``options`` options."""
    allowed = LETTERS[:options]
    for name, pattern in RULES:
        match = pattern.search(text)
        if match:
            letter = match.group(1) if pattern.groups else match.group(0)
            if letter in allowed:
                return Extracted(letter, name)
    return Extracted(None, NONE_FOUND)


def fallback(options: int) -> str:
    """The letter the authors' code counts when no rule finds one: its "random" draw, re-seeded before every draw."""
    return FALLBACK[options]
