"""Read the real MMLU data from the directory named by MMLU_DATA_DIR.

The files are parsed with the csv module, never by splitting lines: fields hold quoted line
breaks, some files use CRLF, and a few rows are exact duplicates in the original release (they
are kept, so counts match the official files: dev 285, val 1,531, test 14,042).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .groups import GROUPS

SPLITS = ("dev", "val", "test")
LETTERS = ("A", "B", "C", "D")


class DataMissing(RuntimeError):
    """The MMLU directory is absent or incomplete; the message says how to get it."""


@dataclass(frozen=True)
class Question:
    subject: str
    split: str
    index: int  # 0-based row number within the subject's file
    question: str
    choices: tuple[str, str, str, str]
    answer: str  # "A".."D"


@dataclass(frozen=True)
class Subject:
    name: str  # file name form, e.g. "college_medicine"
    subcategory: str
    group: str
    sizes: dict  # split -> number of rows

    @property
    def title(self) -> str:
        """Readable name, as the prompt header writes it ("college medicine")."""
        return self.name.replace("_", " ")


class MMLUData:
    """One MMLU directory: subjects.csv plus dev/, val/ and test/ CSV files."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    @property
    def subjects(self) -> dict[str, Subject]:
        return _read_subjects(self.root)

    def subject(self, name: str) -> Subject:
        try:
            return self.subjects[name]
        except KeyError:
            raise KeyError(f"unknown subject {name!r}") from None

    def questions(self, subject: str, split: str) -> tuple[Question, ...]:
        if split not in SPLITS:
            raise KeyError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
        self.subject(subject)
        return _read_split_file(self.root, subject, split)

    def question(self, subject: str, split: str, index: int) -> Question:
        rows = self.questions(subject, split)
        if not 0 <= index < len(rows):
            raise IndexError(f"{subject} {split} has {len(rows)} questions; index must be 0 to {len(rows) - 1}")
        return rows[index]

    def group_sizes(self, split: str = "test") -> dict[str, int]:
        """Number of questions in each of the paper's four groups, by group key (groups.py)."""
        keys = {group.name: group.key for group in GROUPS}
        sizes = dict.fromkeys(keys.values(), 0)
        for subject in self.subjects.values():
            sizes[keys[subject.group]] += subject.sizes[split]
        return sizes


@lru_cache(maxsize=4)
def _read_subjects(root: Path) -> dict[str, Subject]:
    path = root / "subjects.csv"
    if not path.is_file():
        raise DataMissing(
            f"MMLU data not found at {root}. Set MMLU_DATA_DIR to a directory holding subjects.csv, "
            "dev/, val/ and test/, or run: python -m engine mmlu download"
        )
    with open(path, newline="", encoding="utf-8") as fh:
        return {
            row["subject"]: Subject(
                name=row["subject"], subcategory=row["subcategory"], group=row["group"],
                sizes={split: int(row[split]) for split in SPLITS},
            )
            for row in csv.DictReader(fh)
        }


@lru_cache(maxsize=256)
def _read_split_file(root: Path, subject: str, split: str) -> tuple[Question, ...]:
    path = root / split / f"{subject}_{split}.csv"
    if not path.is_file():
        raise DataMissing(f"missing MMLU file {path}; run: python -m engine mmlu download")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    questions = []
    for index, row in enumerate(rows):
        if len(row) != 6 or row[5] not in LETTERS:
            raise DataMissing(f"{path} row {index + 1} is not question,A,B,C,D,answer")
        questions.append(Question(subject, split, index, row[0], tuple(row[1:5]), row[5]))
    return tuple(questions)
