"""Label-noise and contamination checks on our copy of the MMLU files, counted rather than quoted.

``split_counts`` finds rows that repeat inside a split and rows that two splits share (a worked
example in dev that is also a test question is a question the model is shown with its answer).
``overlap_with_test`` is the n-gram check of any text against the test questions. Both see only
exact wording: a paraphrase or a translation of a test question passes them untouched.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from explainers import ngram_overlap

from ..data import SPLITS
from .reader import MMLUData

OVERLAP_N = 8  # words per n-gram, a common choice for decontamination checks
MAX_PASTED = 20_000  # characters a reader may check at once
_WORD = re.compile(r"[a-z0-9]+")  # as explainers.ngram_overlap splits words


def _grams(text: str, n: int) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _rows(data: MMLUData, split: str) -> list[tuple]:
    """Every row of a split as (question, A, B, C, D, key), whatever its subject."""
    return [(q.question, *q.choices, q.answer) for subject in data.subjects for q in data.questions(subject, split)]


@lru_cache(maxsize=4)
def split_counts(root: Path) -> dict:
    """{"sizes", "duplicates", "repeated_questions", "shared"} for the MMLU files under ``root``.

    duplicates[split]: extra copies of a row identical in question, options and key;
    repeated_questions[split]: extra copies of a question's text (options or key may differ);
    shared["dev/test"] etc.: distinct rows present in both splits.
    """
    data = MMLUData(root)
    rows = {split: _rows(data, split) for split in SPLITS}
    extra = lambda items: sum(k - 1 for k in Counter(items).values() if k > 1)  # noqa: E731
    pairs = [("dev", "test"), ("val", "test"), ("dev", "val")]
    return {
        "sizes": {split: len(rows[split]) for split in SPLITS},
        "duplicates": {split: extra(rows[split]) for split in SPLITS},
        "repeated_questions": {split: extra(row[0] for row in rows[split]) for split in SPLITS},
        "shared": {f"{a}/{b}": len(set(rows[a]) & set(rows[b])) for a, b in pairs},
    }


@lru_cache(maxsize=4)
def _test_questions(root: Path) -> tuple[tuple[str, str, int, str], ...]:
    data = MMLUData(root)
    return tuple((q.subject, "test", q.index, " ".join([q.question, *q.choices]))
                 for subject in data.subjects for q in data.questions(subject, "test"))


def overlap_with_test(root: Path, text: str, n: int = OVERLAP_N, top: int = 5) -> list[dict]:
    """The test questions sharing most of the pasted text's word n-grams: [{"subject", "index", "overlap"}].

    ``overlap`` is explainers.ngram_overlap of the question (with its options) against the text:
    the share of the question's n-grams found in what was pasted. Only questions with some overlap
    are listed, largest first.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("paste some text to check")
    if len(text) > MAX_PASTED:
        raise ValueError(f"paste at most {MAX_PASTED:,} characters at a time")
    pasted = _grams(text, n)
    found = []
    for subject, _split, index, question in _test_questions(root):
        # A quick set test first, so the exact share (explainers) is computed only where it is not 0.
        if pasted.isdisjoint(_grams(question, n)):
            continue
        found.append({"subject": subject, "index": index, "overlap": ngram_overlap(question, text, n)})
    return sorted(found, key=lambda row: (-row["overlap"], row["subject"], row["index"]))[:top]
