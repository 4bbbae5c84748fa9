"""Read the real MMLU data from the directory named by MMLU_DATA_DIR (server only: file I/O).

The files are parsed with the csv module, never by splitting lines: fields hold quoted line
breaks, some files use CRLF, and a few rows are exact duplicates in the original release (they
are kept, so counts match the official files: dev 285, val 1,531, test 14,042).

Loading is defensive: a file that is missing, empty, not UTF-8 or not six columns per row makes
only its own subject unavailable (SubjectUnavailable, a DataMissing), and a bad row of
subjects.csv drops only that subject; every message names the subject and the file inside the
data directory, never the server's own paths.
"""
from __future__ import annotations

import csv
import io
import logging
from functools import lru_cache
from pathlib import Path

from ..data import DOWNLOAD_HINT, LETTERS, SPLITS, DataMissing, Question, Subject, SubjectUnavailable
from ..groups import BY_NAME, GROUPS

log = logging.getLogger(__name__)


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

    def groups(self) -> list[str]:
        """The subjects, as the benchmarks' shared API and evaluate ask a reader (task_api.Reader)."""
        return list(self.subjects)

    def in_group(self, subject: str, split: str) -> tuple[Question, ...]:
        return self.questions(subject, split)

    def shots(self, subject: str, k: int) -> tuple[Question, ...]:
        """The subject's first ``k`` worked examples, from its dev split."""
        return self.questions(subject, "dev")[:k]

    def question(self, subject: str, split: str, index: int) -> Question:
        rows = self.questions(subject, split)
        if not 0 <= index < len(rows):
            raise IndexError(f"{subject} {split} has {len(rows)} questions; index must be 0 to {len(rows) - 1}")
        return rows[index]

    def usable(self, subject: str) -> bool:
        """Whether the subject's dev, val and test files all read (a damaged one is skipped as a default)."""
        try:
            for split in SPLITS:
                self.questions(subject, split)
        except (DataMissing, KeyError):
            return False
        return True

    def group_sizes(self, split: str = "test") -> dict[str, int]:
        """Number of questions in each of the paper's four groups, by group key (groups.py)."""
        keys = {group.name: group.key for group in GROUPS}
        sizes = dict.fromkeys(keys.values(), 0)
        for subject in self.subjects.values():
            sizes[keys[subject.group]] += subject.sizes[split]
        return sizes


def _decoded(path: Path, shown: str, subject: str | None) -> str:
    """A data file's text; a missing or non-UTF-8 file raises with a message naming ``shown``
    (the path inside the data directory) and logs the full path for the operator."""
    kind = SubjectUnavailable if subject else DataMissing
    who = f"{subject.replace('_', ' ')} is unavailable: " if subject else ""
    try:
        raw = path.read_bytes()
    except OSError as error:
        log.warning("cannot read %s: %s", path, error)
        raise kind(f"{who}the MMLU file {shown} is missing or unreadable; {DOWNLOAD_HINT}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        log.warning("%s is not UTF-8: %s", path, error)
        raise kind(f"{who}the MMLU file {shown} is not UTF-8 text (at byte {error.start:,}); "
                   f"it is damaged: {DOWNLOAD_HINT}") from None


def _subject_row(row: dict) -> Subject:
    """One subjects.csv row; ValueError when a cell is missing or malformed."""
    name = row.get("subject") or ""
    if not name.isascii() or not name.replace("_", "").isalnum():
        raise ValueError(f"subject name {name!r} is not a file name")
    if row.get("group") not in BY_NAME:
        raise ValueError(f"group {row.get('group')!r} is not one of the four")
    sizes = {}
    for split in SPLITS:
        cell = (row.get(split) or "").strip()
        if not (cell.isascii() and cell.isdigit()):
            raise ValueError(f"{split} size {cell!r} is not a whole number")
        sizes[split] = int(cell)
    return Subject(name=name, subcategory=row.get("subcategory") or "", group=row["group"], sizes=sizes)


@lru_cache(maxsize=4)
def _read_subjects(root: Path) -> dict[str, Subject]:
    path = root / "subjects.csv"
    if not path.is_file():
        log.warning("no subjects.csv in MMLU_DATA_DIR=%s", root)
        raise DataMissing(
            "MMLU data not found: the directory MMLU_DATA_DIR names has no subjects.csv. Set MMLU_DATA_DIR to a "
            "directory holding subjects.csv, dev/, val/ and test/, or run: python -m benchmarks mmlu download"
        )
    subjects = {}
    for line, row in enumerate(csv.DictReader(io.StringIO(_decoded(path, "subjects.csv", None), newline="")), start=2):
        try:
            subject = _subject_row(row)
        except ValueError as error:  # one bad row drops one subject, not the site
            log.warning("subjects.csv line %d skipped: %s", line, error)
            continue
        subjects[subject.name] = subject
    if not subjects:
        raise DataMissing(f"subjects.csv lists no readable subject; it is damaged: {DOWNLOAD_HINT}")
    return subjects


@lru_cache(maxsize=256)
def _read_split_file(root: Path, subject: str, split: str) -> tuple[Question, ...]:
    shown = f"{split}/{subject}_{split}.csv"
    text = _decoded(root / split / f"{subject}_{split}.csv", shown, subject)
    who = f"{subject.replace('_', ' ')} is unavailable: "
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise SubjectUnavailable(f"{who}{shown} is not valid CSV ({error}); {DOWNLOAD_HINT}") from None
    if not rows:
        raise SubjectUnavailable(f"{who}{shown} holds no questions; it is damaged: {DOWNLOAD_HINT}")
    questions = []
    for index, row in enumerate(rows):
        if len(row) != 6 or row[5] not in LETTERS:  # a truncated file ends in such a row
            raise SubjectUnavailable(f"{who}{shown} row {index + 1} is not question,A,B,C,D,answer; "
                                     f"the file is damaged: {DOWNLOAD_HINT}")
        questions.append(Question(subject, split, index, row[0], tuple(row[1:5]), row[5]))
    return tuple(questions)
