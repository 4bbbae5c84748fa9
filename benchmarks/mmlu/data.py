"""MMLU's data types, sans I/O (they ship in the browser's wheel): splits, letters, a question, a
subject, and the errors a reader raises. The reader itself is server/reader.py."""
from __future__ import annotations

from dataclasses import dataclass

SPLITS = ("dev", "val", "test")
LETTERS = ("A", "B", "C", "D")


class DataMissing(RuntimeError):
    """The MMLU directory is absent or incomplete; the message says how to get it."""


class SubjectUnavailable(DataMissing):
    """One subject's file is missing or unreadable; the other subjects still work."""


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


DOWNLOAD_HINT = "run: python -m benchmarks mmlu download (or set MMLU_DATA_DIR)"
