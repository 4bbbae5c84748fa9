"""The live model's published runs (benchmarks/mmlu/runs/) as files for the static export
(engine/export.py), where no model runs: the live-scoring widget there answers a standard test
question with the published run's answer, named as that run's. The files' layout, and the form that
reads them, are every benchmark's (engine/published_answers.py): a question costs one small file (at
most about 58 KB: high school world history's long passages).
"""
from __future__ import annotations

from pathlib import Path

from benchmarks.server.runfile import one_run, read_rows
from engine import published_answers

from .published_runs import FILE_PATTERN, RUNS_DIR, PublishedRunError
from .reader import MMLUData

SPLIT = "test"  # the published runs are over the whole test set


def static_files(data: MMLUData, folder: Path = RUNS_DIR) -> dict[str, bytes]:
    """{path inside the document's folder of the export: bytes}; {} without published runs."""
    runs = {}
    for path in sorted(folder.glob(FILE_PATTERN)):
        rows = one_run(path, read_rows(path), PublishedRunError)
        first = next(iter(rows.values()))
        runs[path.name.removesuffix(".jsonl.gz")] = (first, rows)
    if not runs:
        return {}
    subjects = data.subjects
    questions = {name: [{
        "question": question.question, "choices": list(question.choices), "key": question.answer,
        "answers": {run: published_answers.answer(rows[(name, question.index)]) for run, (_, rows) in runs.items()
                    if (name, question.index) in rows},
    } for question in data.questions(name, SPLIT)] for name in subjects}
    return published_answers.files(
        [{"name": name, "method": first["method"], "shots": first["shots"], "model": first["model"],
          "file": f"benchmarks/mmlu/runs/{name}.jsonl.gz"} for name, (first, _) in runs.items()],
        [{"name": name, "title": subject.title, "questions": subject.sizes[SPLIT]} for name, subject in subjects.items()],
        questions)
