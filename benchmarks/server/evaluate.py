"""The one ``evaluate`` command of every benchmark: ``python -m engine <benchmark> evaluate``.

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
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import explainers
from benchmarks.runfile import make_row, rotations_setting
from livescoring.scorer import GENERATE_MAX_NEW_TOKENS

from .multiple_choice import GENERATIVE, METHODS, answer_questions
from .runfile import SAVE_EVERY_S, RunWriter, read_rows
from .summary import report, summarise

# The fastest measured on this project's 2-core machine (bench/scoring.py, README "Performance"):
# eight questions per forward pass (their tokens packed into one set of matrix products: 1.2x
# faster than one question per pass; sixteen were no faster) and one worker per core, each running
# its questions on one torch thread (two threads on one question were 1.4x slower than two
# questions side by side).
DEFAULT_BATCH_SIZE = 8
DEFAULT_WORKERS = os.cpu_count() or 1
DEFAULT_THREADS = 1


class Task:
    """One benchmark's parts of the shared command; subclasses set the class attributes and methods.

    A question ("doc") is any object with ``index`` (0-based within its group and split) and
    ``question``; the task says the rest."""

    name: str  # the command's benchmark word: python -m engine <name> evaluate
    prompt: object  # the prompt module: prompt_parts(group, question, choices, shots) and MAX_SHOTS
    group_field: str  # the rows' group field: "subject" or "category" (benchmarks/runfile.py)
    groups_option: str  # the command's option naming groups, and the summary's key: "subjects", "categories"
    group_words: tuple[str, str]  # ("subject", "subjects")
    default_out: Path
    create_folder = False  # whether a missing folder of --out is made (MMLU-Pro's command always did)
    data: object  # the benchmark's reader
    methods: tuple[str, ...] = METHODS  # the methods it scores (``generative`` where it reads generated text)
    chat_template = False  # whether it builds prompts in the model's chat template (--apply-chat-template)
    until: tuple[str, ...] = ()  # generative: the stop sequences (the model's end of text always stops)
    max_gen_toks = GENERATE_MAX_NEW_TOKENS  # generative: at most this many new tokens

    # -- the benchmark's command line --------------------------------------------------------
    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The benchmark's own options (at least ``--<groups_option>``)."""
        raise NotImplementedError

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
        return [f"--{cls.groups_option}", *getattr(args, cls.groups_option)]

    # -- the task as data --------------------------------------------------------------------
    def groups(self, names: list[str]) -> list[str]:
        """The groups to score (``["all"]``: every group); a ValueError in words for unknown names."""
        raise NotImplementedError

    def questions(self, group: str, split: str) -> Sequence:
        raise NotImplementedError

    def shots(self, group: str, k: int) -> Sequence:
        """The group's first ``k`` worked examples, objects the prompt module takes."""
        raise NotImplementedError

    def doc_to_choice(self, doc) -> Sequence[str]:
        raise NotImplementedError

    def doc_to_target(self, doc) -> str:
        """The answer's letter."""
        return doc.answer

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
        return len(doc.question) + sum(len(c) for c in self.doc_to_choice(doc))


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
    pending = {}
    for group in groups:
        docs = task.questions(group, split)
        docs = docs[:limit] if limit else docs
        pending[group] = [d for d in docs if (group, split, d.index) not in done
                          and (only is None or (group, d.index) in only)]
    jobs = batches(task, pending, shots, method, batch_size, prompt_format, delimiter, rotations)
    another = scorer.twin if hasattr(scorer, "twin") else lambda: twin(scorer)  # a ServerSet makes its own
    scorers = [scorer] + [another() for _ in range(workers - 1)]
    try:
        with tqdm(total=sum(map(len, jobs)) // rotations, desc="scoring", unit="q", disable=not progress, file=sys.stderr,
                  smoothing=0.05) as bar:

            def write(job: list[dict], results: list[dict]) -> None:
                new = []
                for at in range(0, len(job), rotations):  # a question's requests: one, or one per rotation
                    request, result = job[at], results[at]
                    identity, extra = task.row_fields(request["doc"], split)
                    if method == GENERATIVE:
                        result = {**result, **task.read_generated(request["doc"], result["generated"])}
                        extra = {"options": len(request["choices"]), **extra}
                    if rotations > 1:
                        extra = {**extra, **rotation_fields(job[at:at + rotations], results[at:at + rotations])}
                    new.append(make_row(identity, method, extra, request["key"], result, template))
                rows.extend(new)
                if writer:
                    writer.add(new)
                bar.update(len(job) // rotations)

            score_jobs(scorers, jobs, answer_questions, write)
    finally:
        if writer:
            writer.close()
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


# -- the command --------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser, task: type[Task]) -> None:
    """The benchmark's own options, then the shared ones."""
    task.add_arguments(parser)
    max_shots = task.prompt.MAX_SHOTS
    parser.add_argument("--shots", type=int, default=5, help=f"worked examples, 0 to {max_shots} (default 5)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions per "
                        f"{task.group_words[0]} (0: all)")
    parser.add_argument("--per-group", type=int, default=0, metavar="N",
                        help=f"a stratified sample: N questions drawn at random from each {task.group_words[0]} "
                             "(seeded by --seed; 0: every question)")
    parser.add_argument("--seed", type=int, default=0, help="the --per-group sample's seed (default 0)")
    parser.add_argument("--method", choices=task.methods, default="letter",
                        help="letter (the letters' log-likelihoods), option (each option's text's)"
                             + (", generative (greedy generation read by lm-evaluation-harness's filter and exact "
                                "match, as its mmlu_generative)" if GENERATIVE in task.methods else ""))
    if task.chat_template:
        parser.add_argument("--apply-chat-template", action="store_true",
                            help="build the prompt in the model's chat template, as lm-evaluation-harness's "
                                 "--apply_chat_template does (worked examples as turns, the description as the "
                                 "system turn)")
    parser.add_argument("--rotations", type=int, default=1, metavar="K",
                        help="the rotation check: ask each question K times (2 to its number of options), its options "
                             "rotated cyclically by 0 to K-1 places, the key moving with its text; each row holds every "
                             "rotation's answer (letter method; default 1: no rotation)")
    parser.add_argument("--out", type=Path, default=task.default_out,
                        help="JSONL file to write (gzip-compressed if it ends .gz)")
    parser.add_argument("--resume", action="store_true",
                        help="continue --out: keep its complete lines and score only the questions not in it")
    parser.add_argument("--force", action="store_true", help="overwrite an existing --out")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                        help=f"questions per forward pass (default {DEFAULT_BATCH_SIZE}, the fastest measured on CPU; "
                             "try larger on a GPU)")
    parser.add_argument("--server", nargs="+", metavar="URL",
                        help="score on these model servers (python -m livescoring serve, or any OpenAI-compatible "
                             "server with prompt log-probabilities) instead of loading the model here; the workers "
                             "take them in turn; a key in MODEL_SERVER_API_KEY is sent")
    parser.add_argument("--model", help="override SCORER_MODEL (a local directory, a cached model id, or smollm2)")
    parser.add_argument("--device", help="override SCORER_DEVICE (auto, cpu, cuda)")
    parser.add_argument("--dtype", help="override SCORER_DTYPE (auto, float32, bfloat16, float16)")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help=f"questions scored side by side on one model (default {DEFAULT_WORKERS}, one per core, "
                             "the fastest measured)")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                        help=f"torch CPU threads each worker's operations share (default {DEFAULT_THREADS})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def output_problem(out: Path, resume: bool, force: bool) -> str | None:
    """Why ``out`` cannot be written as asked, in words, or None; checked before any slow work."""
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        return f"the directory {parent} does not exist; create it or choose another --out"
    if out.exists():
        if out.is_dir():
            return f"{out} is a directory; --out must be a file"
        if not os.access(out, os.W_OK):
            return f"{out} is not writable"
        if not (resume or force):
            return f"{out} already exists; add --resume to continue it or --force to overwrite it"
    if not os.access(parent, os.W_OK):
        return f"cannot create files in {parent}"  # every save writes a temporary file beside --out
    return None


def resume_command(task: type[Task], args: argparse.Namespace) -> str:
    """The command that continues this run where it stopped."""
    words = ["python", "-m", "engine", task.name, "evaluate", *task.command_words(args),
             "--shots", str(args.shots), "--limit", str(args.limit), "--method", args.method, "--out", str(args.out),
             "--batch-size", str(args.batch_size), "--workers", str(args.workers)]
    if getattr(args, "apply_chat_template", False):
        words.append("--apply-chat-template")
    if args.rotations > 1:
        words += ["--rotations", str(args.rotations)]
    if args.per_group:
        words += ["--per-group", str(args.per_group), "--seed", str(args.seed)]
    if args.server:
        words += ["--server", *args.server]
    for option in ("model", "device", "dtype", "threads"):
        if getattr(args, option) is not None:
            words += [f"--{option}", str(getattr(args, option))]
    return shlex.join([*words, "--resume"])


def argument_problem(task: type[Task], args: argparse.Namespace) -> str | None:
    max_shots = task.prompt.MAX_SHOTS
    if not 0 <= args.shots <= max_shots:
        return f"--shots must be from 0 to {max_shots}"
    if args.limit < 0:
        return "--limit must be 0 (all) or more"
    if args.per_group < 0:
        return "--per-group must be 0 (every question) or more"
    if args.rotations < 1:
        return "--rotations must be 1 (no rotation) or more"
    if args.rotations > 1 and args.method != "letter":
        return "--rotations scores letters: use it with --method letter"
    if args.batch_size < 1:
        return "--batch-size must be 1 or more"
    if args.workers < 1:
        return "--workers must be 1 or more"
    if args.resume and args.force:
        return "--resume and --force contradict each other; choose one"
    if args.server and (args.model or args.device or args.dtype):
        return "--model, --device and --dtype choose the model loaded here; --server scores on the servers' model"
    if task.create_folder and str(args.out.parent) and not args.out.parent.exists():
        args.out.parent.mkdir(parents=True, exist_ok=True)
    return output_problem(args.out, args.resume, args.force)


def open_scorer(args: argparse.Namespace, config) -> tuple[object, str]:
    """What scores the run, and a line naming it: the model loaded here (Scorer), or ``--server``'s
    servers (ServerSet), each asked first whether it can score. Raises ModelUnavailable,
    BackendUnsuitable or ModelServerError."""
    from livescoring.model import ModelSettings, load
    from livescoring.scorer import Scorer

    from .servers import open_servers

    if args.server:
        return open_servers(args.server)
    loaded = load(ModelSettings.from_config(config))
    return (Scorer(loaded, batch_rows=args.batch_size),
            f"{loaded.name} on {loaded.device} ({loaded.dtype}, {loaded.threads} thread(s)), loaded in "
            f"{loaded.load_seconds:.1f} s")


def stopped(args: argparse.Namespace, task_type: type[Task], why: str) -> None:
    saved = read_rows(args.out) if args.out.exists() else []
    print(f"\n{why}: {args.out} holds {len(saved)} complete rows. Continue with:\n"
          f"  {resume_command(task_type, args)}", file=sys.stderr)


def run(args: argparse.Namespace, task_type: type[Task], unavailable: tuple[type[Exception], ...] = ()) -> int:
    from engine.config import default_config
    from livescoring.client import BackendUnsuitable, ModelServerError
    from livescoring.model import ModelUnavailable

    cannot_score = (ValueError, BackendUnsuitable, *unavailable)  # exit 2: what to change is named
    no_model = (ModelUnavailable, ModelServerError)  # exit 3: the model (or every server) could not be had

    problem = argument_problem(task_type, args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    config = default_config()
    overrides = {"SCORER_MODEL": args.model, "SCORER_DEVICE": args.device, "SCORER_DTYPE": args.dtype,
                 "SCORER_THREADS": args.threads}
    config.update({k: v for k, v in overrides.items() if v is not None})
    split = task_type.split_of(args)
    try:
        task = task_type.open(config, args)
        groups = task.groups(getattr(args, task_type.groups_option))
        scorer, about = open_scorer(args, config)
    except cannot_score as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except no_model as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    template = "chat" if getattr(args, "apply_chat_template", False) else "plain"
    only = stratified_sample(task, groups, split, args.per_group, args.seed) if args.per_group else None
    print(f"Model: {about}; method {args.method}; {template} prompt; {args.shots}-shot; {split} split; "
          f"batches of {args.batch_size}; {args.workers} worker(s)", file=sys.stderr)
    try:
        rows = evaluate(task, scorer, groups, split, args.shots, args.limit, args.method, args.out,
                        progress=not args.no_progress, resume=args.resume, batch_size=args.batch_size,
                        workers=args.workers, template=template, rotations=args.rotations, only=only)
    except cannot_score as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        stopped(args, task_type, "Interrupted")
        return 130
    except no_model as error:  # every server stopped answering: the rows so far are saved
        stopped(args, task_type, f"Stopped: {error}")
        return 3
    summary = summarise(rows, task_type.groups_option)
    print(report(summary, task_type.groups_option, task_type.group_words))
    print(f"{args.out} holds {summary['questions']} rows")
    return 0
