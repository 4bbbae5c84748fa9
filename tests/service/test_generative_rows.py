"""Run-file rows of the generative method and the chat template (no model): the schema's fields and
order, old rows still read as plain-text runs, resume refusing a run of another template, and the
summary of generative rows (no probabilities; a response matching no letter counts as "none")."""
from __future__ import annotations

import json

import pytest

from benchmarks.mmlu.server.evaluate import MMLUTask
from benchmarks.runfile import make_row, normalise, settings_of, template_of
from benchmarks.server import evaluate_command
from benchmarks.server import summary as summaries
from benchmarks.server.runfile import RunWriter

MODEL = {"name": "m"}


def generative_row(index: int, response: str, key: str = "A", template: str = "plain") -> dict:
    from benchmarks.mmlu.data import Question

    doc = Question("astronomy", "test", index, "Q?", ("a", "b", "c", "d"), key)
    read = MMLUTask(None).read_generated(doc, f" {response}\nmore")
    result = {"shots_used": 0, "model": MODEL, "generated": f" {response}", **read}
    return make_row({"subject": "astronomy", "split": "test", "index": index}, "generative", {"options": 4}, key,
                    result, template)


def test_a_generative_row_in_the_schemas_order_read_by_the_harness_filter():
    row = generative_row(0, "a.")
    assert list(row) == ["subject", "split", "index", "method", "template", "options", "shots", "probabilities",
                         "prediction", "key", "correct", "response", "generated", "confidence", "vocabulary_share",
                         "model"]
    assert (row["response"], row["prediction"], row["correct"]) == ("a.", "A", True)  # case and punctuation ignored
    wrong = generative_row(1, "A. 4")  # the chat template's typical line: not an exact match
    assert (wrong["response"], wrong["prediction"], wrong["correct"]) == ("A. 4", None, False)


def test_rows_without_a_template_are_plain_runs_and_read_unchanged():
    old = {"subject": "astronomy", "split": "test", "index": 0, "method": "letter", "shots": 0,
           "probabilities": {"A": 1.0}, "prediction": "A", "key": "A", "correct": True, "confidence": 1.0,
           "vocabulary_share": 0.5, "model": "m"}
    assert normalise(old) == old and template_of(old) == "plain" and settings_of(old) == ("letter", "test")
    assert settings_of({**old, "template": "chat"}) == ("letter", "test", "chat")


def test_resume_refuses_a_run_of_another_template(tmp_path):
    out = tmp_path / "run.jsonl"
    with RunWriter(out, ("generative", "test")) as writer:
        writer.add([generative_row(0, "A")])
    assert RunWriter(out, ("generative", "test"), resume=True).done() == {("astronomy", "test", 0)}
    with pytest.raises(ValueError, match="another run"):
        RunWriter(out, ("generative", "test", "chat"), resume=True)
    assert json.loads(out.read_text())["template"] == "plain"


def test_the_summary_of_generative_rows():
    rows = [generative_row(0, "A"), generative_row(1, "B"), generative_row(2, "A. 4"), generative_row(3, "")]
    summary = summaries.summarise(rows)
    assert summary["micro"]["accuracy"] == 0.25 and summary["chance"] == 0.25
    assert summary["predicted_letters"] == {"A": 1, "B": 1, "none": 2}
    assert summary["rms_calibration_error"] is None
    assert "RMS calibration" not in summaries.report(summary)


def test_mmlu_has_every_method_and_the_chat_template_mmlu_pro_letter_and_option():
    import argparse

    from benchmarks.mmlu.server import evaluate as mmlu
    from benchmarks.mmlu_pro.server import evaluate as mmlu_pro

    parser = argparse.ArgumentParser()
    mmlu.add_arguments(parser)
    args = parser.parse_args(["--method", "generative", "--apply-chat-template"])
    assert (args.method, args.apply_chat_template) == ("generative", True)
    command = evaluate_command.resume_command(mmlu.MMLUTask, args)  # what an interrupted run prints
    assert "--method generative" in command and "--apply-chat-template" in command
    assert parser.parse_args(command.split()[5:]).apply_chat_template
    parser = argparse.ArgumentParser()
    mmlu_pro.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--method", "generative"])
    with pytest.raises(SystemExit):
        parser.parse_args(["--apply-chat-template"])
