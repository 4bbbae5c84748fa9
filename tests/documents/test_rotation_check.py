"""The rotation check's widget (benchmarks/mmlu/rotation_widget.py) and its context
(benchmarks/mmlu/server/rotation_runs.py): the counts drawn equal a recount of the rows, a model
that answers a position is told from one that reads, and the published checks are whole runs."""
from __future__ import annotations

import gzip
import json
import re

import pytest

import explainers
from benchmarks.mmlu.rotation_widget import rotation_runs as check_context
from benchmarks.mmlu.rotation_widget import view
from benchmarks.mmlu.server import rotation_runs

SUBJECTS = {"anatomy": 4, "astronomy": 4, "virology": 4}
KEYS = "ABCDBCDADACB"


def rows_of(pick) -> list[dict]:
    """Rows of a 4-rotation check where ``pick(key_position)`` is the position the model answers."""
    rows = []
    for i, (subject, index) in enumerate((s, j) for s, n in SUBJECTS.items() for j in range(n)):
        key = KEYS[i]
        rotations = []
        for shift in range(4):
            position = pick(explainers.rotated_letter(key, shift, 4))
            answer = explainers.original_letter(position, shift, 4)
            rotations.append({"shift": shift, "position": position, "answer": answer,
                              "key_probability": 0.9 if answer == key else 0.03})
        rows.append({"subject": subject, "split": "test", "index": index, "method": "letter", "template": "plain",
                     "rotations": rotations, "shots": 0, "probabilities": {}, "prediction": rotations[0]["position"],
                     "key": key, "correct": rotations[0]["answer"] == key, "confidence": 0.9,
                     "vocabulary_share": 0.1, "model": "Test model (a note)"})
    return rows


def context_of(rows: list[dict], name: str = "check.jsonl.gz") -> dict:
    from pathlib import Path

    run = rotation_runs.summarise(Path(name), rows, SUBJECTS)
    return check_context("rotation_runs", {"runs": [run]})


@pytest.mark.parametrize("width", [320, 640, 1200])
def test_a_model_that_always_answers_a_is_never_consistent_and_the_view_says_it_answers_a_position(width):
    context = {"rotation_runs": context_of(rows_of(lambda key_position: "A"))}
    shown = view({"run": "0-shot", "subject": "all", "width": width}, context)
    numbers = shown["numbers"]
    assert numbers["same"] == 0 and numbers["all"] == 0 and numbers["favourite"] == "A"
    assert numbers["at_favourite"] == [1.0] * 4
    assert numbers["first"] == pytest.approx(sum(k == "A" for k in KEYS) / len(KEYS))
    assert numbers["mean"] == pytest.approx(0.25)  # each key visits position A once in four orders
    assert "answers a position, not an option" in " ".join(shown["summary"])
    assert context["rotation_runs"]["runs"][0]["sample"] == "all 12"


def test_a_model_that_reads_is_right_and_consistent_in_every_order_and_a_subject_can_be_chosen():
    context = {"rotation_runs": context_of(rows_of(lambda key_position: key_position))}
    shown = view({"run": "0-shot", "subject": "virology", "width": 640}, context)
    assert shown["numbers"]["n"] == 4
    assert (shown["numbers"]["same"], shown["numbers"]["all"], shown["numbers"]["first"]) == (1, 1, 1)
    assert "virology" in shown["summary"][0] and "move with the options" in shown["summary"][2]


def test_a_run_with_a_question_twice_or_uneven_subjects_is_refused():
    from pathlib import Path

    rows = rows_of(lambda key_position: "A")
    with pytest.raises(rotation_runs.RotationRunError, match="twice"):
        rotation_runs.summarise(Path("x"), rows + rows[:1], SUBJECTS)
    with pytest.raises(rotation_runs.RotationRunError, match="neither the whole test set"):
        rotation_runs.summarise(Path("x"), rows[:-1], SUBJECTS)
    with pytest.raises(ValueError, match="positions"):
        broken = context_of(rows)
        broken["runs"][0]["all"]["positions"][0][0] += 1
        check_context("rotation_runs", broken)


def test_the_published_checks_are_whole_runs_or_stratified_samples_and_their_counts_are_a_recount():
    """Every number the widget draws for the published files, recounted from the rows without
    explainers or the summariser."""
    from benchmarks.mmlu.server import data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from engine.config import default_config

    files = sorted(rotation_runs.ROTATIONS_DIR.glob("*.jsonl.gz"))
    assert files, "the rotation checks are published in benchmarks/mmlu/runs/rotations/"
    data = MMLUData(data_dir(default_config()))
    sizes = {name: s.sizes["test"] for name, s in data.subjects.items()}
    runs = {run["shots"]: run for run in rotation_runs.widget_context(sizes)["rotation_runs"]["runs"]}
    assert 5 in runs and runs[5]["sample"] == "20 per subject (1,140)"  # the 5-shot stratified sample
    for path in files:
        with gzip.open(path, "rt") as lines:
            rows = [json.loads(line) for line in lines]
        run = runs[rows[0]["shots"]]
        assert run["whole"] == (len(rows) == sum(sizes.values()))
        answers = [[r["answer"] for r in row["rotations"]] for row in rows]
        recount = {"n": len(rows), "consistent": sum(a.count(a[0]) == 4 for a in answers),
                   "all_right": sum(a == [row["key"]] * 4 for a, row in zip(answers, rows, strict=True)),
                   "first_right": sum(row["correct"] for row in rows),
                   "right": sum(a.count(row["key"]) for a, row in zip(answers, rows, strict=True))}
        assert {k: run["all"][k] for k in recount} == recount
        assert run["all"]["positions"] == [[sum(row["rotations"][s]["position"] == p for row in rows) for p in "ABCD"]
                                           for s in range(4)]


LEDGER_ENTRY = re.compile(r"^data: benchmarks/mmlu/runs/rotations/(?P<file>\S+\.jsonl\.gz), rotation_metrics (?P<key>\w+)")


@pytest.mark.parametrize("slug", ["mmlu", "scoring-lesson"])
def test_the_ledgers_rotation_numbers_are_recounted_from_the_files_they_name(slug):
    """Each ledger number whose source is a published rotation check is that file's, recounted here
    without explainers (percent, one decimal)."""
    import tomllib
    from pathlib import Path

    ledger = Path(__file__).resolve().parents[2] / "content" / slug / "numbers.toml"
    entries = [e for e in tomllib.loads(ledger.read_text())["cited"] if LEDGER_ENTRY.match(e["source"])]
    assert entries, f"{slug}'s ledger names the rotation check's numbers"
    for entry in entries:
        found = LEDGER_ENTRY.match(entry["source"])
        with gzip.open(rotation_runs.ROTATIONS_DIR / found["file"], "rt") as lines:
            rows = [json.loads(line) for line in lines]
        answers = [[r["answer"] for r in row["rotations"]] for row in rows]
        shares = {"consistent": sum(len(set(a)) == 1 for a in answers) / len(rows),
                  "accuracy_all_rotations": sum(a == [row["key"]] * 4 for a, row in zip(answers, rows, strict=True))
                  / len(rows),
                  "accuracy_first_rotation": sum(row["correct"] for row in rows) / len(rows),
                  "accuracy_mean": sum(a.count(row["key"]) for a, row in zip(answers, rows, strict=True))
                  / (4 * len(rows))}
        assert f"{100 * shares[found['key']]:.1f}" == entry["value"], entry
