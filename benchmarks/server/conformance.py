"""``python -m benchmarks mmlu conformance``: does a model server score as the published runs were scored?

It takes ``--questions`` questions of a published run (a seeded sample over the whole run), scores
them through ``--server`` with the evaluate machinery (benchmarks/server/evaluate.py on a
servers.ServerSet: the same prompts, packing and workers as ``evaluate --server``) in the run's own
settings (method, split, shots, template), and prints how many predictions agree with the run's,
the largest difference in any letter's probability (max |dp|; a generative run has none, and
counts identical generated texts instead) and the wall time. Exit 0 when every prediction agrees
and max |dp| is within ``--tolerance``, 1 when not, 2 for a server that cannot score (no prompt
log-probabilities aligned with the tokens sent, said in words) or a bad option, 3 when no server
answers. Any OpenAI-compatible server can be checked this way before a run is trusted to it.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from benchmarks.runfile import group_of, question_key

from .evaluate import DEFAULT_BATCH_SIZE, DEFAULT_WORKERS, Task, evaluate
from .runfile import read_rows

DEFAULT_QUESTIONS = 50
TOLERANCE = 1e-5  # the suite's bound on a re-scored probability (tests/model/test_published_runs.py)


def add_arguments(parser: argparse.ArgumentParser, runs_dir: Path) -> None:
    names = ", ".join(published(runs_dir))
    parser.add_argument("--server", nargs="+", required=True, metavar="URL",
                        help="the model server(s) to check (a key in MODEL_SERVER_API_KEY is sent)")
    parser.add_argument("--run", required=True, help=f"a published run ({names}) or a run file's path")
    parser.add_argument("--questions", type=int, default=DEFAULT_QUESTIONS,
                        help=f"how many of the run's questions to score (default {DEFAULT_QUESTIONS})")
    parser.add_argument("--seed", type=int, default=0, help="which questions: the sample's seed (default 0)")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help=f"the largest |dp| that still conforms (default {TOLERANCE})")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="questions per request")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="requests in flight")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def published(runs_dir: Path) -> list[str]:
    return sorted(path.name.removesuffix(".jsonl.gz") for path in runs_dir.glob("*.jsonl.gz"))


def run_path(name: str, runs_dir: Path) -> Path:
    """The published run ``name`` (with or without .jsonl.gz) or a path; ValueError naming the choices."""
    for path in (runs_dir / f"{name}.jsonl.gz", runs_dir / name, Path(name)):
        if path.is_file():
            return path
    raise ValueError(f"no run {name!r}: name a published run ({', '.join(published(runs_dir))}) or a run file")


def compare(published_rows: list[dict], again: list[dict]) -> dict:
    """Agreement of predictions, max |dp| over every letter, and identical generated texts."""
    by_key = {question_key(row): row for row in again}
    agree, same_text, max_dp = 0, 0, 0.0
    for row in published_rows:
        mine = by_key[question_key(row)]
        agree += mine["prediction"] == row["prediction"]
        same_text += mine.get("generated") == row.get("generated")
        for letter, p in (row["probabilities"] or {}).items():
            max_dp = max(max_dp, abs(mine["probabilities"][letter] - p))
    return {"questions": len(published_rows), "agree": agree, "same_text": same_text,
            "max_dp": max_dp if published_rows[0]["probabilities"] is not None else None}


def rescore(task: Task, servers, rows: list[dict], sample: list[dict], args: argparse.Namespace) -> list[dict]:
    """The sample's questions scored again through ``servers`` in the run's settings."""
    first = rows[0]
    shots = max(row["shots"] for row in rows)  # the run's requested shots: a row records those that fit
    return evaluate(task, servers, sorted({group_of(row) for row in sample}), first["split"], shots,
                    method=first["method"], progress=not args.no_progress, batch_size=args.batch_size,
                    workers=args.workers, template=first.get("template", "plain"),
                    only={(group_of(row), row["index"]) for row in sample})


def report(result: dict, run_name: str, server: str, seconds: float, tolerance: float) -> tuple[str, bool]:
    n, agree, max_dp = result["questions"], result["agree"], result["max_dp"]
    conforms = agree == n and (max_dp is None or max_dp <= tolerance)
    lines = [f"Server: {server}; run: {run_name}; {n} questions",
             f"Prediction agreement: {agree}/{n} ({100 * agree / n:.1f}%)",
             "Max |dp| (largest difference in any letter's probability): "
             + (f"{max_dp:.2e}" if max_dp is not None else
                f"none (a generative run); identical generated text {result['same_text']}/{n}"),
             f"Wall time: {seconds:.1f} s ({seconds / n:.2f} s a question)",
             ("Conforms" if conforms else "Does not conform") + f" (tolerance {tolerance:g})"]
    return "\n".join(lines), conforms


def run(args: argparse.Namespace, task_type: type[Task], runs_dir: Path,
        unavailable: tuple[type[Exception], ...] = ()) -> int:
    from engine.config import default_config
    from livescoring.client import BackendUnsuitable, ModelServerError

    from .servers import open_servers

    if args.questions < 1 or args.batch_size < 1 or args.workers < 1:
        print("error: --questions, --batch-size and --workers must be 1 or more", file=sys.stderr)
        return 2
    try:
        servers, about = open_servers(args.server)
        path = run_path(args.run, runs_dir)
        rows = read_rows(path)
        if not rows:
            raise ValueError(f"{path} holds no rows")
        sample = random.Random(args.seed).sample(rows, min(args.questions, len(rows)))
        print(f"Model: {about}; {len(sample)} questions of {path.name}", file=sys.stderr)
        started = time.perf_counter()
        again = rescore(task_type.open(default_config(), args), servers, rows, sample, args)
        seconds = time.perf_counter() - started
    except (ValueError, BackendUnsuitable, *unavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ModelServerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    text, conforms = report(compare(sample, again), path.name, " ".join(servers.urls), seconds, args.tolerance)
    print(text)
    return 0 if conforms else 1
