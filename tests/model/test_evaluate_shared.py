"""The shared evaluate command (benchmarks/server/evaluate.py) run for MMLU-Pro with the real model:
two workers, a run interrupted and resumed, give the rows of one uninterrupted one-worker run;
both benchmarks' command lines reach the one command.
"""
from __future__ import annotations

import threading

import pytest

from benchmarks.mmlu.server import evaluate as mmlu_evaluate
from benchmarks.mmlu_pro.server import data_dir
from benchmarks.mmlu_pro.server import evaluate as mmlu_pro_evaluate
from benchmarks.mmlu_pro.server.reader import MMLUProData
from benchmarks.runfile import question_key
from benchmarks.server import evaluate as shared
from benchmarks.server import evaluate_command
from benchmarks.server import summary as summaries
from benchmarks.server.runfile import read_rows
from engine.__main__ import main as cli_main
from engine.config import default_config

TOLERANCE = 1e-5
CATEGORIES = ["computer science", "history"]
LIMIT = 3


def test_both_benchmarks_evaluate_through_the_shared_command_and_keep_their_old_flags():
    import argparse

    shared_flags = ["--workers", "2", "--batch-size", "4", "--resume", "--method", "letter", "--dtype", "auto",
                    "--rotations", "4", "--per-group", "20", "--seed", "3"]
    old_flags = {mmlu_evaluate: ["--subjects", "astronomy", "--split", "val", "--shots", "0", "--limit", "2",
                                 "--out", "x.jsonl", "--model", "m", "--device", "cpu", "--threads", "1",
                                 "--no-progress"],
                 mmlu_pro_evaluate: ["--categories", "computer-science", "--shots", "0", "--limit", "2", "--out",
                                     "x.jsonl", "--model", "m", "--device", "cpu", "--threads", "1", "--no-progress"]}
    for module, task in ((mmlu_evaluate, mmlu_evaluate.MMLUTask), (mmlu_pro_evaluate, mmlu_pro_evaluate.MMLUProTask)):
        assert issubclass(task, shared.Task)
        parser = argparse.ArgumentParser()
        module.add_arguments(parser)
        args = parser.parse_args(old_flags[module] + shared_flags)
        assert (args.workers, args.batch_size, args.resume, args.limit) == (2, 4, True, 2)
        command = evaluate_command.resume_command(task, args)  # what an interrupted run prints
        assert command.startswith(f"python -m benchmarks {task.name} evaluate --{task.groups_option} ")
        again = parser.parse_args(command.split()[5:])
        assert {**again.__dict__, "no_progress": True} == args.__dict__


def test_mmlu_pro_refuses_bad_options_before_loading_the_model(tmp_path, capsys):
    existing = tmp_path / "done.jsonl"
    existing.write_text("")
    for extra, message in ((["--out", str(existing)], "already exists; add --resume"),
                           (["--workers", "0"], "--workers"), (["--batch-size", "0"], "--batch-size"),
                           (["--out", str(existing), "--resume", "--force"], "contradict"),
                           (["--rotations", "4", "--method", "option"], "--rotations scores letters"),
                           (["--rotations", "0"], "--rotations must be 1"), (["--per-group", "-1"], "--per-group")):
        assert cli_main(["mmlu-pro", "evaluate", "--categories", "law", *extra]) == 2
        assert message in capsys.readouterr().err


@pytest.mark.model
def test_two_workers_and_a_resume_after_an_interruption_give_the_uninterrupted_rows(tmp_path, loaded_model):
    import torch

    from livescoring.scorer import Scorer

    loaded = loaded_model
    data = MMLUProData(data_dir(default_config()))

    calls = {"n": 0}
    lock = threading.Lock()

    class Interrupted(Scorer):
        """Stops the run (as Ctrl-C would) on the third batch; the two before are saved."""

        def loglikelihood(self, requests, stop=None):
            with lock:
                calls["n"] += 1
                interrupt = calls["n"] == 3
            if interrupt:
                raise KeyboardInterrupt
            return super().loglikelihood(requests, stop)

    task = mmlu_pro_evaluate.MMLUProTask(data)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the command runs them: one torch thread per worker
    try:
        whole = tmp_path / "whole.jsonl"
        shared.evaluate(task, Scorer(loaded), CATEGORIES, "test", shots=1, limit=LIMIT, progress=False,
                        out=whole, batch_size=2, workers=1)
        parts = tmp_path / "parts.jsonl.gz"
        with pytest.raises(KeyboardInterrupt):
            shared.evaluate(task, Interrupted(loaded), CATEGORIES, "test", shots=1, limit=LIMIT, progress=False,
                            out=parts, batch_size=2, workers=2, save_every=0)
        kept = read_rows(parts)
        assert 0 < len(kept) < len(CATEGORIES) * LIMIT
        shared.evaluate(task, Scorer(loaded), CATEGORIES, "test", shots=1, limit=LIMIT, progress=False,
                        out=parts, resume=True, batch_size=2, workers=2)
    finally:
        torch.set_num_threads(threads)
    one = {question_key(r): r for r in read_rows(whole)}
    resumed = read_rows(parts)
    assert resumed[:len(kept)] == kept  # the interrupted run's rows are kept as they were
    two = {question_key(r): r for r in resumed}
    assert len(one) == len(two) == len(resumed) == len(CATEGORIES) * LIMIT and one.keys() == two.keys()
    for key, a in one.items():
        b = two[key]
        assert list(a) == list(b)  # the same fields in the same order
        assert {k: v for k, v in a.items() if k not in ("probabilities", "confidence", "vocabulary_share")} == \
               {k: v for k, v in b.items() if k not in ("probabilities", "confidence", "vocabulary_share")}
        assert b["probabilities"] == pytest.approx(a["probabilities"], abs=TOLERANCE)
        assert b["vocabulary_share"] == pytest.approx(a["vocabulary_share"], abs=TOLERANCE)
    assert set(one[next(iter(one))]) >= {"question_id", "category", "split", "index", "method", "options", "shots"}


@pytest.mark.model
def test_a_rotation_check_row_holds_what_each_rotated_question_gets_alone(tmp_path, loaded_model):
    """``evaluate --rotations 4``: each rotation's answer is the one the rotated question gets when
    asked on its own; shift 0 is the plain run; the summary's metrics equal a recount of the rows."""
    import explainers
    from benchmarks.mmlu.server import data_dir as mmlu_data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from benchmarks.server.multiple_choice import answer_question
    from livescoring.scorer import Scorer

    data = MMLUData(mmlu_data_dir(default_config()))
    task = mmlu_evaluate.MMLUTask(data)
    subjects = ["astronomy", "virology"]
    out = tmp_path / "rotations.jsonl"
    rows = shared.evaluate(task, Scorer(loaded_model), subjects, shots=0, limit=2, out=out, progress=False,
                           rotations=4)
    plain = {question_key(r): r for r in shared.evaluate(task, Scorer(loaded_model), subjects, shots=0, limit=2,
                                                         progress=False)}
    assert read_rows(out) == rows and len(rows) == 4
    for row in rows:
        doc = task.questions(row["subject"], "test")[row["index"]]
        assert [r["shift"] for r in row["rotations"]] == [0, 1, 2, 3]
        assert row["prediction"] == plain[question_key(row)]["prediction"]
        for rotation in row["rotations"]:
            choices = explainers.rotate_options(list(doc.choices), rotation["shift"])
            alone = answer_question(Scorer(loaded_model), prompt_format=task.prompt, subject=row["subject"],
                                    question=doc.question, choices=choices, shots=[], method="letter",
                                    key=explainers.rotated_letter(doc.answer, rotation["shift"], 4))
            assert rotation["position"] == alone["prediction"]
            assert choices["ABCD".index(rotation["position"])] == doc.choices["ABCD".index(rotation["answer"])]
            assert rotation["key_probability"] == pytest.approx(alone["probabilities"][alone["key"]], abs=TOLERANCE)
    summary = summaries.summarise(rows, "subjects")["rotation"]
    same = sum(len({r["answer"] for r in row["rotations"]}) == 1 for row in rows)
    right = sum(all(r["answer"] == row["key"] for r in row["rotations"]) for row in rows)
    assert (summary["consistent_count"], summary["all_rotations_count"]) == (same, right)
    with pytest.raises(ValueError, match="--rotations scores letters"):
        shared.evaluate(task, Scorer(loaded_model), subjects, shots=0, limit=1, method="option", rotations=4)
