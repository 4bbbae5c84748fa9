"""The live model's published runs (benchmarks/mmlu/runs/) as files for the static export
(engine/export.py), where no model runs: the live-scoring widget there answers a standard test
question with the published run's answer, named as that run's.

Each subject's test questions in files of ``CHUNK`` (``published/<subject>/<n>.json`` holds questions
n·CHUNK to n·CHUNK + CHUNK - 1: their text, key, and each run's answer), so a question costs one
small file (at most about 58 KB: high school world history's long passages); ``published/index.json`` lists the
runs (method, shots, model, file), the subjects and CHUNK. The answers are the rows as the runs wrote them
(prediction, correct, the letter probabilities of a letter run, the generated text of a
generative one), probabilities rounded to four places. Written with sorted keys: the same runs give
the same bytes.
"""
from __future__ import annotations

import json
from pathlib import Path

from benchmarks.server.runfile import read_rows

from .published_runs import FILE_PATTERN, RUNS_DIR, _checked
from .reader import MMLUData

SPLIT = "test"  # the published runs are over the whole test set
CHUNK = 25


def _answer(row: dict) -> dict:
    answer = {"prediction": row["prediction"], "correct": row["correct"]}
    if row.get("probabilities"):
        answer["probabilities"] = {letter: round(p, 4) for letter, p in row["probabilities"].items()}
    if row.get("generated") is not None:
        answer["generated"] = row["generated"]
    return answer


def _dumped(value) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def static_files(data: MMLUData, folder: Path = RUNS_DIR) -> dict[str, bytes]:
    """{path inside the document's folder of the export: bytes}; {} without published runs."""
    runs = {}
    for path in sorted(folder.glob(FILE_PATTERN)):
        rows = _checked(path, read_rows(path))
        first = next(iter(rows.values()))
        runs[path.name.removesuffix(".jsonl.gz")] = (first, rows)
    if not runs:
        return {}
    subjects = data.subjects
    files = {"published/index.json": _dumped({
        "runs": [{"name": name, "method": first["method"], "shots": first["shots"], "model": first["model"],
                  "file": f"benchmarks/mmlu/runs/{name}.jsonl.gz"} for name, (first, _) in runs.items()],
        "subjects": [{"name": name, "title": subject.title, "questions": subject.sizes[SPLIT]}
                     for name, subject in subjects.items()],
        "chunk": CHUNK,
    })}
    for name in subjects:
        questions = [{
            "question": question.question, "choices": list(question.choices), "key": question.answer,
            "answers": {run: _answer(rows[(name, question.index)]) for run, (_, rows) in runs.items()
                        if (name, question.index) in rows},
        } for question in data.questions(name, SPLIT)]
        for start in range(0, len(questions), CHUNK):
            files[f"published/{name}/{start // CHUNK}.json"] = _dumped(questions[start:start + CHUNK])
    return files
