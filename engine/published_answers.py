"""Published runs' answers as files, for the live forms of the static export (engine/export.py), where no
model runs: a standard question is answered there with the answer a published run gave to it, named
as that run's. One form for every benchmark (templates/widgets/_published_answers.html, read by
static/js/widgets/published-answers.js), drawn by a document's live widget there
(``DocumentHooks.static_live_widget``) and on the export's page for each of its live forms.

    published/index.json             {"runs": [{"name", "method", "shots", "model", "file"}],
                                      "subjects": [{"name", "title", "questions"[, "total"]}],
                                      "chunk": CHUNK[, "covers": words, "subject_word": "Category"]}
    published/<subject>/<n>.json     questions n·CHUNK to n·CHUNK + CHUNK - 1 (numbered from 0):
                                      [{"question", "choices", "key", "answers": {run: answer}}]

so a question costs one small file. A subject's ``questions`` are those the runs answered, numbered
from 1 as the live site numbers them; ``total`` (when the runs cover fewer) is how many it has. An
answer is the row as its run wrote it (prediction, correct, the letter probabilities of a letter run,
rounded to four places, the generated text of a generative one). A document adds the files through
``DocumentHooks.static_files`` (under its own folder). Written with sorted keys: the same runs give
the same bytes.
"""
from __future__ import annotations

import json
from pathlib import Path

CHUNK = 25
INDEX = "published/index.json"


def answer(row: dict) -> dict:
    """One run's answer to one question, as the files give it."""
    found = {"prediction": row["prediction"], "correct": row["correct"]}
    if row.get("probabilities"):
        found["probabilities"] = {letter: round(p, 4) for letter, p in row["probabilities"].items()}
    if row.get("generated") is not None:
        found["generated"] = row["generated"]
    return found


def _dumped(value) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def files(runs: list[dict], subjects: list[dict], questions: dict[str, list[dict]],
          covers: str | None = None, subject_word: str | None = None) -> dict[str, bytes]:
    """{path inside the document's folder of the export: bytes}: the index and each subject's
    ``questions`` (in order from its first, numbered 1) in files of CHUNK. ``covers``: which questions
    the runs answered, in words, where not every test question; ``subject_word``: what the benchmark
    calls a subject."""
    index = {"runs": runs, "subjects": subjects, "chunk": CHUNK, **({"covers": covers} if covers else {}),
             **({"subject_word": subject_word} if subject_word else {})}
    written = {INDEX: _dumped(index)}
    for subject in subjects:
        asked = questions[subject["name"]]
        for start in range(0, len(asked), CHUNK):
            written[f"published/{subject['name']}/{start // CHUNK}.json"] = _dumped(asked[start:start + CHUNK])
    return written


def read_index(document_folder: Path) -> dict | None:
    """The index an export wrote under a document's folder, or None: the document has no published runs."""
    path = document_folder / INDEX
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
