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

from benchmarks.server import evaluate as shared
from benchmarks.server import evaluate_command as command
from benchmarks.server import summary as summaries
from benchmarks.server.evaluate import DEFAULT_BATCH_SIZE, DEFAULT_THREADS, DEFAULT_WORKERS, Task
from benchmarks.server.runfile import SAVE_EVERY_S, read_lines, read_rows

from .. import prompt
from ..data import DataMissing
from ..prompt import MAX_SHOTS
from ..task import TASK
from . import data_dir
from . import harness_tasks as harness
from .reader import MMLUData
from .validation import QUESTION_SPLITS

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_THREADS", "DEFAULT_WORKERS", "MAX_SHOTS", "MMLUTask", "add_arguments",
           "batches", "characters", "evaluate", "read_complete_rows", "report", "run", "summarise"]


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

    def questions(self, group: str, split: str):
        return self.data.questions(group, split)

    def shots(self, group: str, k: int):
        return self.data.questions(group, "dev")[:k]

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


def characters(q) -> int:
    """A question's length in characters of its question and options: what its scoring costs, roughly."""
    return len(q.question) + sum(len(c) for c in q.choices)


def batches(data: MMLUData, questions: dict[str, list], shots: int, method: str, batch_size: int) -> list[list[dict]]:
    """The shared command's batches (benchmarks/server/evaluate.batches) for MMLU questions per subject."""
    return shared.batches(MMLUTask(data), questions, shots, method, batch_size)


def read_complete_rows(path: Path) -> tuple[list[dict], int]:
    """The rows of the file's complete lines, and the byte length they take."""
    lines = read_lines(path)
    return read_rows(path), sum(len(line.encode("utf-8")) for line in lines)


def summarise(rows: list[dict]) -> dict:
    """The shared summary with subjects as the groups (benchmarks/server/summary.py)."""
    return summaries.summarise(rows, "subjects")


def report(summary: dict) -> str:
    return summaries.report(summary, "subjects", MMLUTask.group_words)


def evaluate(scorer, data: MMLUData, subjects: list[str], split: str = "test", shots: int = 5,
             limit: int = 0, method: str = "letter", out: Path | None = None, progress: bool = True,
             resume: bool = False, batch_size: int = DEFAULT_BATCH_SIZE, workers: int = 1,
             save_every: float = SAVE_EVERY_S, template: str = "plain") -> dict:
    """Score the questions, save their rows to ``out``, and return the summary of every row
    (benchmarks/server/evaluate.evaluate does the work)."""
    rows = shared.evaluate(MMLUTask(data), scorer, subjects, split, shots, limit, method, out, progress, resume,
                           batch_size, workers, save_every, template)
    return summarise(rows)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    command.add_arguments(parser, MMLUTask)


def run(args: argparse.Namespace) -> int:
    return command.run(args, MMLUTask, (DataMissing,))
