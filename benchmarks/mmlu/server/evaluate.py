"""``python -m benchmarks mmlu evaluate``: run the live scorer over real MMLU questions.

The command is the shared one (benchmarks/server/evaluate.py: packed batches, ``--workers``,
``--resume``, atomic saves, the summary); this module is MMLU's task: its 57 subjects, its splits,
its dev-split worked examples, its prompt. Writes one JSON line per question (the schema in
benchmarks/runfile.py) and prints micro and macro accuracy with 95 % intervals and the RMS
calibration error, all computed by ``explainers``. All 57 subjects by default. A run can be stopped
at any moment and continued with ``--resume``. An existing file is never overwritten unless
``--force`` says so.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.server import evaluate_command as command
from benchmarks.server.evaluate import Task

from .. import prompt
from ..data import DataMissing
from ..task import TASK
from . import data_dir
from . import harness_tasks as harness
from .reader import MMLUData
from .validation import QUESTION_SPLITS


class MMLUTask(Task):
    """MMLU: questions by subject and split; worked examples from the subject's dev split."""

    spec = TASK
    default_out = Path("mmlu-results.jsonl")
    # the generative method's stop sequences and length, as the harness's mmlu_generative (harness_tasks.py)
    until = harness.STOP
    max_gen_toks = harness.HARNESS_MAX_GEN_TOKS

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--subjects", nargs="+", default=["all"], metavar="SUBJECT",
                            help="subject names (e.g. astronomy college_medicine), or 'all' (the default: all 57)")
        parser.add_argument("--split", choices=QUESTION_SPLITS, default="test")

    @classmethod
    def open(cls, config, args: argparse.Namespace) -> MMLUTask:
        return cls(MMLUData(data_dir(config)))

    @classmethod
    def command_words(cls, args: argparse.Namespace) -> list[str]:
        return ["--subjects", *args.subjects, "--split", args.split]

    def groups(self, names: list[str]) -> list[str]:
        return chosen_subjects(names, self.data)

    def prompt_format(self, method: str, template: str = "plain", tokenizer=None):
        """Plain: the MMLU prompt (the harness's mmlu and mmlu_generative both use it), a space
        before the scored letter or option. Chat: the harness's turns in the model's chat template,
        nothing before the scored text (harness_tasks.HarnessPrompt)."""
        if template == "plain":
            return prompt, " "
        render = harness.chat_renderer(tokenizer) if tokenizer is not None else None
        if render is None:
            raise ValueError("the model's tokenizer has no chat template; leave out --apply-chat-template")
        chat = harness.HarnessPrompt("mmlu_generative" if method == "generative" else "mmlu", render)
        return chat, chat.delimiter

    def read_generated(self, doc, text: str) -> dict:
        """mmlu_generative's filter (get_response: the first line, trimmed) and its exact_match
        (ignoring case and punctuation) against the answer's letter."""
        response = harness.get_response(text)
        return {"response": response, "prediction": harness.generated_letter(response),
                "correct": harness.exact_match(response, doc.answer)}


def chosen_subjects(names: list[str], data: MMLUData) -> list[str]:
    if names == ["all"]:
        return list(data.subjects)
    unknown = [n for n in names if n not in data.subjects]
    if unknown:
        raise ValueError(f"unknown subject(s): {', '.join(unknown)}; see subjects.csv for the 57 names")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    command.add_arguments(parser, MMLUTask)


def run(args: argparse.Namespace) -> int:
    return command.run(args, MMLUTask, (DataMissing,))
