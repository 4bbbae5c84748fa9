"""The one ``evaluate`` of every benchmark, as a library; its command line is evaluate_command.py.

A benchmark supplies a :class:`Task` (in the spirit of lm-evaluation-harness's tasks as data): its
questions by group and split, its worked examples, its prompt module (``doc_to_text``), each
question's options (``doc_to_choice``) and answer letter (``doc_to_target``), the fields that name a
question in its rows, its own command-line options. Everything else is here and shared:

* the questions to score, minus those a resumed file already holds (benchmarks/server/runfile.py:
  whole rows only, atomic saves, gzip when ``--out`` ends ``.gz``; an existing file is never
  overwritten unless ``--force`` says so);
* packed batches: the questions of a group share its prompt prefix and are scored ``--batch-size``
  to a forward pass, shortest first so a batch's questions are of about one length (each batch's
  prompts fitted and read by benchmarks/server/multiple_choice.py, its requests answered by
  livescoring.scorer's ``loglikelihood`` or ``generate_until``);
* the methods: ``letter`` and ``option`` (log-likelihoods), and where the task has them
  ``generative`` (greedy generation, read by the task's filter, as lm-evaluation-harness's
  ``generate_until`` tasks are) and ``--apply-chat-template`` (the prompt built as the harness's
  ``--apply_chat_template`` builds it); the method and the template are written into every row;
* ``--workers`` scorers on one model side by side, each taking the next batch when free
  (livescoring.pool); rows are saved as batches finish, so their order varies;
* or, with ``--server URL [URL ...]``, no model in this process: the workers ask model servers
  (benchmarks/server/servers.py: round robin, a failed call retried on another server, a server
  without prompt log-probabilities refused before the run);
* the progress bar, the summary (micro and macro accuracy with 95 % intervals, the chance rate,
  RMS calibration error, predicted letters, per group: all computed by ``explainers``) and the
  command that continues an interrupted run.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import explainers
from benchmarks.runfile import make_row, rotations_setting
from benchmarks.task import MultipleChoiceTask
from livescoring.scorer import GENERATE_MAX_NEW_TOKENS

from .multiple_choice import GENERATIVE, answer_questions
from .runfile import SAVE_EVERY_S, RunWriter

# The fastest measured on this project's 2-core machine (bench/scoring.py, README "Performance"):
# eight questions per forward pass (their tokens packed into one set of matrix products: 1.2x
# faster than one question per pass; sixteen were no faster) and one worker per core, each running
# its questions on one torch thread (two threads on one question were 1.4x slower than two
# questions side by side).
DEFAULT_BATCH_SIZE = 8
DEFAULT_WORKERS = os.cpu_count() or 1
DEFAULT_THREADS = 1


class Task:
    """One benchmark on its data, for the shared command: the benchmark's typed task (``spec``,
    benchmarks/task.py: its name, prompt, groups, options, target and methods) and its reader's
    reader; a subclass sets ``spec``, ``default_out`` and ``open`` (its reader on the data folder) and
    may add what is truly its own (extra row fields, a generative reading, its command options).

    A question ("doc") is any object with ``index`` (0-based within its group and split) and
    ``question``; the task says the rest."""

    spec: MultipleChoiceTask
    # Read from ``spec`` when a subclass is made, so the command can ask the class (its options
    # exist before any data is read):
    name: str  # the benchmark's word (python -m benchmarks <name> evaluate)
    prompt: object  # the prompt module: prompt_parts(group, question, choices, shots) and MAX_SHOTS
    group_field: str  # the rows' group field: "subject" or "category" (benchmarks/runfile.py)
    groups_option: str  # the command's option naming groups, and the summary's key: "subjects", "categories"
    group_words: tuple[str, str]  # ("subject", "subjects")
    methods: tuple[str, ...]  # the methods it scores (``generative`` where it reads generated text)
    chat_template: bool  # whether it builds prompts in the model's chat template (--apply-chat-template)

    default_out: Path
    create_folder = False  # whether a missing folder of --out is made (MMLU-Pro's command always did)
    until: tuple[str, ...] = ()  # generative: the stop sequences (the model's end of text always stops)
    max_gen_toks = GENERATE_MAX_NEW_TOKENS  # generative: at most this many new tokens

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        spec = cls.spec
        cls.name, cls.prompt, cls.group_field, cls.group_words = spec.name, spec.prompt, spec.group_field, spec.group_words
        cls.groups_option, cls.methods, cls.chat_template = spec.groups_option, spec.methods, spec.chat_template

    def __init__(self, data):
        self.data = data  # the benchmark's reader (benchmarks/server/task_api.Reader: groups, in_group, shots)

    # -- the benchmark's command line --------------------------------------------------------
    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The benchmark's own options: ``--<groups_option>`` (every group by default) and, where it
        has more than one, ``--split``."""
        word, plural = cls.group_words
        parser.add_argument(f"--{plural}", nargs="+", default=["all"], metavar=word.upper(),
                            help=f"{word} names, or 'all' (the default)")
        if len(cls.spec.question_splits) > 1:
            parser.add_argument("--split", choices=cls.spec.question_splits, default=cls.spec.question_splits[0])

    @classmethod
    def open(cls, config, args: argparse.Namespace) -> Task:
        """The task on the benchmark's data folder (from ``config``)."""
        raise NotImplementedError

    @classmethod
    def split_of(cls, args: argparse.Namespace) -> str:
        return getattr(args, "split", "test")

    @classmethod
    def command_words(cls, args: argparse.Namespace) -> list[str]:
        """The benchmark's own options as words, to write the command that resumes a run."""
        words = [f"--{cls.groups_option}", *getattr(args, cls.groups_option)]
        return [*words, "--split", args.split] if hasattr(args, "split") else words

    # -- the task as data --------------------------------------------------------------------
    def groups(self, names: list[str]) -> list[str]:
        """The groups to score (``["all"]``: every group); a ValueError in words for unknown names."""
        known = list(self.data.groups())
        if names == ["all"]:
            return known
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ValueError(f"unknown {self.group_words[1 if len(unknown) > 1 else 0]}: {', '.join(unknown)}; "
                             f"use {', '.join(known)}")
        return names

    def questions(self, group: str, split: str) -> Sequence:
        return self.data.in_group(group, split)

    def shots(self, group: str, k: int) -> Sequence:
        """The group's first ``k`` worked examples, objects the prompt module takes."""
        return self.data.shots(group, k)

    def doc_to_choice(self, doc) -> Sequence[str]:
        return self.spec.doc_to_choice(doc)

    def doc_to_target(self, doc) -> str:
        """The answer's letter."""
        return self.spec.doc_to_target(doc)

    def row_fields(self, doc, split: str) -> tuple[dict, dict]:
        """The row's identity (ending in group, split, index) and the fields after ``method``."""
        return {self.group_field: getattr(doc, self.group_field), "split": split, "index": doc.index}, {}

    def prompt_format(self, method: str, template: str = "plain", tokenizer=None):
        """The prompt format for ``method`` in ``template`` (``plain`` or ``chat``, with the model's
        ``tokenizer``) and the target delimiter (what comes between the prompt and a scored letter
        or option): by default the task's prompt module and a space."""
        if template != "plain":
            raise ValueError(f"{self.name} has no chat-template prompts")
        return self.prompt, " "

    def read_generated(self, doc, text: str) -> dict:
        """A generative method's reading of the generated ``text``: {"response": the filtered
        response, "prediction": the letter it matches or None, "correct": whether it is right}."""
        raise NotImplementedError(f"{self.name} has no generative method")

    def characters(self, doc) -> int:
        """A question's length in characters of its question and options: what its scoring costs, roughly."""
        return self.spec.characters(doc)


# -- scoring ------------------------------------------------------------------------------------

def batches(task: Task, questions: dict[str, list], shots: int, method: str, batch_size: int,
            prompt_format=None, delimiter: str = " ", rotations: int = 1) -> list[list[dict]]:
    """``questions`` (per group) as benchmarks/server/multiple_choice.py's question dicts, in batches
    of one group each, the shortest questions first so that a batch's questions are of about one
    length. ``prompt_format`` and ``delimiter``: those of Task.prompt_format (default: the task's
    prompt module, a space). With ``rotations`` K above 1, each question is asked K times, its
    options rotated by 0 to K − 1 places (explainers.rotate_options; the key moves with its text, the
    worked examples stay), its K requests in one batch and in order of shift."""
    jobs = []
    generative = {"until": task.until, "max_new_tokens": task.max_gen_toks} if method == GENERATIVE else {}
    per_batch = max(1, batch_size // rotations)
    for group, docs in questions.items():
        shots_of = task.shots(group, shots)
        ordered = sorted(docs, key=task.characters)
        for start in range(0, len(ordered), per_batch):
            job = []
            for doc in ordered[start:start + per_batch]:
                choices, key = task.doc_to_choice(doc), task.doc_to_target(doc)
                if rotations > len(choices):
                    raise ValueError(f"--rotations {rotations} is more than the {len(choices)} options of "
                                     f"{group} question {doc.index}: a rotation would come back")
                for shift in range(rotations):
                    job.append({"prompt_format": prompt_format or task.prompt, "subject": group,
                                "question": doc.question, "choices": explainers.rotate_options(choices, shift),
                                "shots": shots_of, "method": method, "delimiter": delimiter,
                                "key": explainers.rotated_letter(key, shift, len(choices)), "index": doc.index,
                                "doc": doc, "shift": shift, **generative})
            jobs.append(job)
    return jobs


def rotation_fields(requests: list[dict], results: list[dict]) -> dict:
    """A rotation check's field for one question (benchmarks/runfile.py), from its requests and
    results in order of shift."""
    rotations = []
    for request, result in zip(requests, results, strict=True):
        shift, options = request["shift"], len(request["choices"])
        rotations.append({"shift": shift, "position": result["prediction"],
                          "answer": explainers.original_letter(result["prediction"], shift, options),
                          "key_probability": result["probabilities"][request["key"]]})
    return {"rotations": rotations}


def evaluate(task: Task, scorer, groups: list[str], split: str = "test", shots: int = 5, limit: int = 0,
             method: str = "letter", out: Path | None = None, progress: bool = True, resume: bool = False,
             batch_size: int = DEFAULT_BATCH_SIZE, workers: int = 1, save_every: float = SAVE_EVERY_S,
             template: str = "plain", only: set | None = None, rotations: int = 1) -> list[dict]:
    """Score the questions, save their rows to ``out`` (if given), and return every row of the run
    (with ``resume``, the rows already in ``out`` first). ``template``: ``plain``, or ``chat`` for
    the prompt in the model's chat template (Task.prompt_format). ``only``: (group, index) pairs,
    the questions to score (the conformance command's sample); None: all. ``rotations`` above 1: the
    rotation check (letter method only; each row holds every rotation's answer, benchmarks/runfile.py).

    ``workers`` scorers on the same model score side by side (livescoring.pool), each taking the
    next batch when it is free; ``scorer`` may be a Scorer or a servers.ServerSet (its twins ask
    the servers in turn). With ``resume``, the rows already in ``out`` are kept and their
    questions skipped. A run stopped by Ctrl-C or an error saves the rows it has (KeyboardInterrupt
    is re-raised)."""
    from tqdm import tqdm

    from livescoring.pool import score_jobs, twin

    if method not in task.methods:
        raise ValueError(f"--method must be one of {', '.join(task.methods)} for {task.name}")
    if rotations > 1 and method != "letter":
        raise ValueError("--rotations scores letters: use it with --method letter")
    prompt_format, delimiter = task.prompt_format(method, template, getattr(getattr(scorer, "loaded", None),
                                                                            "tokenizer", None))
    settings = (method, split) if template == "plain" else (method, split, template)
    if rotations > 1:
        settings = (*settings, rotations_setting(rotations))
    writer = RunWriter(out, settings, resume, save_every) if out is not None else None
    rows: list[dict] = list(writer.rows) if writer else []
    done = writer.done() if writer else set()
    pending = pending_questions(task, groups, split, limit, done, only)
    jobs = batches(task, pending, shots, method, batch_size, prompt_format, delimiter, rotations)
    another = scorer.twin if hasattr(scorer, "twin") else lambda: twin(scorer)  # a ServerSet makes its own
    scorers = [scorer] + [another() for _ in range(workers - 1)]
    try:
        with tqdm(total=sum(map(len, jobs)) // rotations, desc="scoring", unit="q", disable=not progress, file=sys.stderr,
                  smoothing=0.05) as bar:

            def write(job: list[dict], results: list[dict]) -> None:
                new = job_rows(task, job, results, split, method, template, rotations)
                rows.extend(new)
                if writer:
                    writer.add(new)
                bar.update(len(job) // rotations)

            score_jobs(scorers, jobs, answer_questions, write)
    finally:
        if writer:
            writer.close()
    return rows


def pending_questions(task: Task, groups: list[str], split: str, limit: int, done: set,
                      only: set | None) -> dict[str, list]:
    """Per group, the questions still to score: the first ``limit`` (0: all), minus those ``done``
    ((group, split, index) of rows already saved), and only those in ``only`` where it is given."""
    pending = {}
    for group in groups:
        docs = task.questions(group, split)
        docs = docs[:limit] if limit else docs
        pending[group] = [d for d in docs if (group, split, d.index) not in done
                          and (only is None or (group, d.index) in only)]
    return pending


def job_rows(task: Task, job: list[dict], results: list[dict], split: str, method: str, template: str,
             rotations: int) -> list[dict]:
    """The run-file rows of one scored batch: one per question (its requests are one, or one per rotation)."""
    rows = []
    for at in range(0, len(job), rotations):
        request, result = job[at], results[at]
        identity, extra = task.row_fields(request["doc"], split)
        if method == GENERATIVE:
            result = {**result, **task.read_generated(request["doc"], result["generated"])}
            extra = {"options": len(request["choices"]), **extra}
        if rotations > 1:
            extra = {**extra, **rotation_fields(job[at:at + rotations], results[at:at + rotations])}
        rows.append(make_row(identity, method, extra, request["key"], result, template))
    return rows


def stratified_sample(task: Task, groups: list[str], split: str, per_group: int, seed: int) -> set:
    """(group, index) of ``per_group`` questions drawn from each group (all of a smaller group), the
    same for the same seed whatever other groups are asked."""
    import random

    chosen = set()
    for group in groups:
        indices = [doc.index for doc in task.questions(group, split)]
        draw = random.Random(f"{seed}:{group}")
        chosen |= {(group, i) for i in (draw.sample(indices, per_group) if per_group < len(indices) else indices)}
    return chosen
