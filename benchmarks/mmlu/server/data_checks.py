"""Label-noise and contamination checks on our copy of the MMLU files, counted rather than quoted.

``split_counts`` finds rows that repeat inside a split and rows that two splits share (a worked
example in dev that is also a test question is a question the model is shown with its answer).
``overlap_with_test`` is the n-gram check of any text against the test questions. Both see only
exact wording: a paraphrase or a translation of a test question passes them untouched.
"""
from __future__ import annotations

import re
import threading
from collections import Counter
from functools import lru_cache
from pathlib import Path

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


class _TestIndex:
    """Every test question's word n-grams, hashed, in one sorted array beside the question each is
    from: a post looks up only its own n-grams (a binary search each) instead of re-reading all
    14,042 questions (0.3–1.5 CPU-s a post before; issue 26). Built once per data directory.

    Hashes only pick candidates; each candidate's overlap is then computed exactly from its text,
    so a hash collision can add no row (its overlap is 0)."""

    def __init__(self, questions: tuple[tuple[str, str, int, str], ...], n: int):
        import numpy as np

        hashes, owners = [], []
        for number, (*_, text) in enumerate(questions):
            grams = {hash(gram) for gram in _grams(text, n)}
            hashes.extend(grams)
            owners.extend([number] * len(grams))
        order = np.argsort(np.array(hashes, dtype=np.int64), kind="stable")
        self.hashes = np.array(hashes, dtype=np.int64)[order]
        self.owners = np.array(owners, dtype=np.int32)[order]
        self.questions, self.n = questions, n

    def candidates(self, pasted: set[tuple[str, ...]]) -> list[int]:
        """The questions (by number) holding a gram whose hash one of ``pasted``'s has."""
        import numpy as np

        if not pasted:
            return []
        wanted = np.unique(np.array([hash(gram) for gram in pasted], dtype=np.int64))
        starts = np.searchsorted(self.hashes, wanted, side="left")
        ends = np.searchsorted(self.hashes, wanted, side="right")
        found = set()
        for start, end in zip(starts[starts < ends], ends[starts < ends], strict=True):
            found.update(self.owners[start:end].tolist())
        return sorted(found)


_INDEX_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _built_index(root: Path, n: int) -> _TestIndex:
    return _TestIndex(_test_questions(root), n)


def overlap_index(root: Path, n: int = OVERLAP_N) -> _TestIndex:
    """The test set's n-gram index for the MMLU files under ``root`` (built on the first call, about
    a second; concurrent first posts wait for the one build)."""
    with _INDEX_LOCK:
        return _built_index(Path(root), n)


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
    index = overlap_index(root, n)
    found = []
    for number in index.candidates(pasted):
        subject, _split, number_in_subject, question = index.questions[number]
        # explainers.ngram_overlap(question, text, n), from the pasted grams already made
        words = _WORD.findall(question.lower())
        grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
        shared = sum(1 for gram in grams if gram in pasted)
        if shared:
            found.append({"subject": subject, "index": number_in_subject, "overlap": shared / len(grams)})
    return sorted(found, key=lambda row: (-row["overlap"], row["subject"], row["index"]))[:top]
