"""Read the real MMLU-Pro release (two Parquet files) from the folder named by MMLU_PRO_DATA_DIR
(server only: file I/O).

The files are Parquet, so they are read with pyarrow, the Apache Arrow project's own reader (the
format's reference implementation, also what the Hugging Face ``datasets`` library that wrote them
uses), in a child process (:data:`READ_PARQUET`) that sends the rows back one JSON line each: pyarrow,
the numpy it imports and Arrow's memory pool stay out of the web process, which held 112 MiB more
once it had read the files itself (docs/performance.md, issue 36). The child costs the first read
about half a second (its start and pyarrow's import).
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from ..data import COLUMNS, LETTERS, SPLITS, DataMissing, Question, clean_options

UNREADABLE = 2  # READ_PARQUET's exit status for a file that is not Parquet (its message on stderr)
# The child's program: the file's COLUMNS (argv[1], argv[2:]), each row a JSON array in that order.
# ParquetFile reads one file; read_table would also import pyarrow.dataset and pandas (0.15 s).
READ_PARQUET = f"""
import json, sys
import pyarrow.parquet as parquet
from pyarrow import ArrowException
try:
    table = parquet.ParquetFile(sys.argv[1]).read(columns=sys.argv[2:])
except (ArrowException, OSError, ValueError) as error:
    print(error, file=sys.stderr)
    sys.exit({UNREADABLE})
for row in zip(*(column.to_pylist() for column in table.columns)):
    sys.stdout.write(json.dumps(row) + "\\n")
"""


def _read_table(path: Path) -> Iterator[dict]:
    """The file's rows, {column: value} for COLUMNS, in file order, as READ_PARQUET's child sends them
    (taken a line at a time: the file's text is never in this process whole)."""
    if not path.is_file():
        raise DataMissing(
            f"MMLU-Pro data not found: {path} is missing. Set MMLU_PRO_DATA_DIR to a folder holding "
            f"{' and '.join(SPLITS.values())} (the TIGER-Lab/MMLU-Pro release)."
        )
    with subprocess.Popen([sys.executable, "-c", READ_PARQUET, str(path), *COLUMNS], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, encoding="utf-8") as child:
        for line in child.stdout:
            yield dict(zip(COLUMNS, json.loads(line), strict=True))
        problem = child.stderr.read().strip()
    if child.returncode == UNREADABLE:
        raise DataMissing(f"MMLU-Pro file {path} could not be read as Parquet ({problem}).")
    if child.returncode:
        raise RuntimeError(f"reading {path} with pyarrow failed (exit status {child.returncode}): {problem}")


@lru_cache(maxsize=4)
def _read_split(root: Path, split: str) -> tuple[Question, ...]:
    path = root / SPLITS[split]
    seen: Counter = Counter()
    questions = []
    for number, row in enumerate(_read_table(path), 1):
        raw = tuple(row["options"] or ())
        options = clean_options(raw)
        answer = row["answer"]
        if answer not in LETTERS or not options or LETTERS.index(answer) >= len(options):
            raise DataMissing(f"{path} row {number}: answer {answer!r} does not name one of its options")
        category = row["category"]
        questions.append(Question(
            question_id=int(row["question_id"]), split=split, index=seen[category], category=category,
            src=row["src"], question=row["question"], options=options, answer=answer,
            cot_content=row["cot_content"] or "", raw_options=raw,
        ))
        seen[category] += 1
    return tuple(questions)


@lru_cache(maxsize=4)
def _by_category(root: Path, split: str) -> dict[str, tuple[Question, ...]]:
    """The split's questions per category, in file order, sorted once (every MMLU-Pro request asks
    for a category; callers do not change the dict)."""
    found: dict[str, list[Question]] = {}
    for q in _read_split(root, split):
        found.setdefault(q.category, []).append(q)
    return {category: tuple(questions) for category, questions in found.items()}


class MMLUProData:
    """One MMLU-Pro folder: the test and validation Parquet files. Read once, kept in memory."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def questions(self, split: str = "test") -> tuple[Question, ...]:
        if split not in SPLITS:
            raise KeyError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
        return _read_split(self.root, split)

    @property
    def categories(self) -> tuple[str, ...]:
        """The 14 categories, largest first (ties by name)."""
        sizes = self.category_sizes("test")
        return tuple(sorted(sizes, key=lambda name: (-sizes[name], name)))

    def groups(self) -> tuple[str, ...]:
        """The categories, as the benchmarks' shared API and evaluate ask a reader (task_api.Reader)."""
        return self.categories

    def category_sizes(self, split: str = "test") -> dict[str, int]:
        return {category: len(questions) for category, questions in _by_category(self.root, split).items()}

    def in_category(self, category: str, split: str = "test") -> tuple[Question, ...]:
        if split not in SPLITS:
            raise KeyError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
        found = _by_category(self.root, split).get(category)
        if not found:
            raise KeyError(f"unknown category {category!r}; use one of {', '.join(sorted(self.categories))}")
        return found

    def in_group(self, category: str, split: str) -> tuple[Question, ...]:
        return self.in_category(category, split)

    def question(self, category: str, split: str, index: int) -> Question:
        rows = self.in_category(category, split)
        if not 0 <= index < len(rows):
            raise IndexError(f"{category} {split} has {len(rows)} questions; index must be 0 to {len(rows) - 1}")
        return rows[index]

    def shots(self, category: str, k: int = 5) -> tuple[Question, ...]:
        """The category's worked examples from the validation split, in file order (the paper's 5-shot CoT)."""
        return self.in_category(category, "validation")[:k]

    def option_counts(self, split: str = "test") -> dict[int, int]:
        """How many questions have each number of options."""
        return dict(sorted(Counter(len(q.options) for q in self.questions(split)).items()))

    def source_counts(self, split: str = "test") -> dict[str, int]:
        """Questions by origin (ori_mmlu, stemez, theoremQA, scibench), largest first."""
        return dict(Counter(q.source for q in self.questions(split)).most_common())

    def answer_counts(self, split: str = "test") -> dict[str, int]:
        counts = Counter(q.answer for q in self.questions(split))
        return {letter: counts[letter] for letter in LETTERS}

    def padded_options(self, split: str = "test") -> int:
        """Options the file stores with leading or trailing whitespace (stripped here)."""
        return sum(option != option.strip() for q in self.questions(split) for option in q.raw_options)
