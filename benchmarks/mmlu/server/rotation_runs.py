"""The live model's published rotation checks (benchmarks/mmlu/runs/rotations/*.jsonl.gz).

Each file is ``python -m benchmarks mmlu evaluate --rotations 4`` output (benchmarks/runfile.py: every
row holds each rotation's answer). The widgets get :func:`widget_context`'s ``rotation_runs``,
made once at start-up: per run and per subject, the counts behind explainers.rotation_metrics and
where the answers landed (how many picks went to each position in each rotation). See
benchmarks/mmlu/rotation_widget.py for its shape.

A run is refused (logged; the widget then says no check is published) unless its rows are one
setting, no question twice, and each subject holds either all its test questions or the same
number as every other subject (a stratified sample).
"""
from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

import explainers
from benchmarks.live_runs import model_name
from benchmarks.server.runfile import one_run, read_rows

log = logging.getLogger(__name__)
ROTATIONS_DIR = Path(__file__).resolve().parent.parent / "runs" / "rotations"
LETTERS = "ABCD"


class RotationRunError(ValueError):
    """A rotation run file that cannot be drawn."""


def tally(rows: list[dict]) -> dict:
    """The counts the widget draws for these rows (one subject's, or all)."""
    keys = [r["key"] for r in rows]
    metrics = explainers.rotation_metrics([[x["answer"] for x in r["rotations"]] for r in rows], keys)
    rotations = metrics["rotations"]
    positions = [[0] * len(LETTERS) for _ in range(rotations)]
    for row in rows:
        for shift, rotation in enumerate(row["rotations"]):
            positions[shift][LETTERS.index(rotation["position"])] += 1
    return {"n": metrics["questions"], "consistent": metrics["consistent_count"],
            "all_right": metrics["all_rotations_count"], "first_right": metrics["first_rotation_count"],
            "right": metrics["right_count"], "positions": positions}


def summarise(path: Path, rows: list[dict], test_sizes: dict[str, int] | None) -> dict:
    one_run(path, rows, RotationRunError, also=lambda row: (len(row["rotations"]),))
    split, shots, model, rotations = rows[0]["split"], rows[0]["shots"], rows[0]["model"], len(rows[0]["rotations"])
    by_subject: dict[str, list[dict]] = {}
    for row in sorted(rows, key=lambda r: (r["subject"], r["index"])):
        by_subject.setdefault(row["subject"], []).append(row)
    sizes = {subject: len(found) for subject, found in by_subject.items()}
    whole = test_sizes is not None and sizes == test_sizes
    per_subject = set(sizes.values())
    if not whole and (len(per_subject) != 1 or (test_sizes is not None and set(sizes) != set(test_sizes))):
        raise RotationRunError(f"{path.name} is neither the whole test set nor the same number of questions from "
                               "every subject")
    sample = f"all {len(rows):,}" if whole else f"{per_subject.pop()} per subject ({len(rows):,})"
    return {"key": f"{shots}-shot", "shots": shots, "split": split, "rotations": rotations, "sample": sample,
            "whole": whole, "model": model_name(model), "all": tally(rows),
            "subjects": {subject: tally(found) for subject, found in by_subject.items()}}


def widget_context(test_sizes: dict[str, int] | None, folder: Path = ROTATIONS_DIR) -> dict:
    """``{"rotation_runs": {"runs": [...]}}``, the runs fewest shots first; {} when none is published
    or one is refused. ``test_sizes``: questions per subject in the test split (None without the data:
    then any run of equal subject samples is drawn, and none counts as whole)."""
    files = sorted(folder.glob("*.jsonl.gz")) if folder.is_dir() else []
    if not files:
        return {}
    signature = tuple((path.name, path.stat().st_size, path.stat().st_mtime_ns) for path in files)
    try:
        runs = _summarised(tuple(files), signature, tuple(sorted((test_sizes or {}).items())) or None)
    except RotationRunError as error:
        log.error("rotation checks not shown: %s", error)
        return {}
    return {"rotation_runs": {"runs": runs}}


@lru_cache(maxsize=4)
def _summarised(files: tuple[Path, ...], signature: tuple, test_sizes: tuple | None) -> list[dict]:
    sizes = dict(test_sizes) if test_sizes else None
    return sorted((summarise(path, read_rows(path), sizes) for path in files), key=lambda run: run["shots"])
