"""The ``evaluate`` command line every benchmark shares: its options, their checks, the scorer it
opens (the model here, or ``--server`` URLs), the summary it prints and the command that continues
an interrupted run. The scoring itself is evaluate.py's.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from .evaluate import DEFAULT_BATCH_SIZE, DEFAULT_THREADS, DEFAULT_WORKERS, Task, evaluate, stratified_sample
from .multiple_choice import GENERATIVE
from .runfile import read_rows
from .summary import report, summarise


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
    words = ["python", "-m", "benchmarks", task.name, "evaluate", *task.command_words(args),
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
