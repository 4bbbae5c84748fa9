"""MMLU-Pro's data types, sans I/O (they ship in the browser's wheel); the reader is server/reader.py.

Options are stripped of leading and trailing whitespace, as the dataset's 2026-01-18 revision does:
636 options in these files carry such spaces, and a model (or a reader) could pick the odd one out
without knowing anything. The validation split pads its options to ten with the filler "N/A"; the
authors' evaluation code drops those fillers, and so do we.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

LETTERS = "ABCDEFGHIJ"
SPLITS = {"test": "test-00000-of-00001.parquet", "validation": "validation-00000-of-00001.parquet"}
FILLER = "N/A"
# Its 14 categories, as the data files name them (the published run samples 100 questions of each).
CATEGORIES = ("biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
              "history", "law", "math", "other", "philosophy", "physics", "psychology")
# The sources MMLU-Pro's ``src`` field names, as the paper and this page call them.
ORIGINS = {"ori_mmlu": "MMLU", "stemez": "the STEM website", "theoremQA": "TheoremQA", "scibench": "SciBench"}
COLUMNS = ("question_id", "question", "options", "answer", "answer_index", "cot_content", "category", "src")


class DataMissing(RuntimeError):
    """The MMLU-Pro folder or one of its files is absent or unreadable; the message says what to do."""


@dataclass(frozen=True)
class Question:
    question_id: int
    split: str
    index: int  # 0-based position within its category in this split, in file order
    category: str
    src: str
    question: str
    options: tuple[str, ...]  # stripped; validation fillers removed
    answer: str  # "A".."J"
    cot_content: str  # the worked chain of thought (validation only; empty in test)
    raw_options: tuple[str, ...]  # as the file has them

    @property
    def answer_index(self) -> int:
        return LETTERS.index(self.answer)

    @property
    def source(self) -> str:
        """Where the question came from: ori_mmlu, stemez, theoremQA, scibench (or cot_lib in validation)."""
        return self.src.split("-", 1)[0]

    @property
    def origin(self) -> str:
        """Where the question came from, in a reader's words: "MMLU, abstract algebra" for
        ori_mmlu-abstract_algebra, "the STEM website, physical chemistry" for stemez-PhysicalChemistry."""
        source, _, part = self.src.partition("-")
        part = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", part).replace("_", " ").lower()
        name = ORIGINS.get(source, source)
        return f"{name}, {part}" if part else name


def clean_options(options) -> tuple[str, ...]:
    """The options a reader and a model see: whitespace stripped, "N/A" fillers dropped."""
    return tuple(option.strip() for option in options if option.strip() != FILLER)
