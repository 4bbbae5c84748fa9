"""``python -m engine mmlu evaluate``: run the live scorer over real MMLU questions.

Writes one JSON line per question (fields in README, "Live scoring") and prints micro and macro
accuracy with 95 % intervals and the RMS calibration error, all computed by ``explainers``.
All 57 subjects by default. A run can be stopped at any moment and continued with ``--resume``:
each row is one ``write`` of a whole line, and only complete lines count when a file is read back
(a torn last line is cut off before appending). An existing file is never overwritten unless
``--force`` says so. Questions of a subject are scored in batches that share the subject's
prompt prefix (livescoring.scorer), shortest first so a batch pads little.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from pathlib import Path

import explainers
from engine.config import default_config
from livescoring.model import ModelSettings, ModelUnavailable, load
from livescoring.pool import score_jobs, twin
from livescoring.scorer import METHODS, Scorer

from .. import prompt
from ..prompt import MAX_SHOTS
from . import data_dir
from .reader import MMLUData
from .validation import QUESTION_SPLITS

CALIBRATION_BINS = 10
# The fastest measured on this project's 2-core machine (bench/scoring.py, README "Performance"):
# eight questions per forward pass (their tokens packed into one set of matrix products: 1.2x
# faster than one question per pass; sixteen were no faster) and one worker per core, each running
# its questions on one torch thread (two threads on one question were 1.4x slower than two
# questions side by side).
DEFAULT_BATCH_SIZE = 8
DEFAULT_WORKERS = os.cpu_count() or 1
DEFAULT_THREADS = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--subjects", nargs="+", default=["all"], metavar="SUBJECT",
                        help="subject names (e.g. astronomy college_medicine), or 'all' (the default: all 57)")
    parser.add_argument("--split", choices=QUESTION_SPLITS, default="test")
    parser.add_argument("--shots", type=int, default=5, help=f"worked examples, 0 to {MAX_SHOTS} (default 5)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions per subject (0: all)")
    parser.add_argument("--method", choices=tuple(METHODS), default="letter")
    parser.add_argument("--out", type=Path, default=Path("mmlu-results.jsonl"), help="JSONL file to write")
    parser.add_argument("--resume", action="store_true",
                        help="continue --out: keep its complete lines and score only the questions not in it")
    parser.add_argument("--force", action="store_true", help="overwrite an existing --out")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                        help=f"questions per forward pass (default {DEFAULT_BATCH_SIZE}, the fastest measured on CPU; "
                             "try larger on a GPU)")
    parser.add_argument("--model", help="override SCORER_MODEL (a local directory, a cached model id, or smollm2)")
    parser.add_argument("--device", help="override SCORER_DEVICE (auto, cpu, cuda)")
    parser.add_argument("--dtype", help="override SCORER_DTYPE (auto, float32, bfloat16, float16)")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help=f"questions scored side by side on one model (default {DEFAULT_WORKERS}, one per core, "
                             "the fastest measured)")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                        help=f"torch CPU threads each worker's operations share (default {DEFAULT_THREADS})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def chosen_subjects(names: list[str], data: MMLUData) -> list[str]:
    if names == ["all"]:
        return list(data.subjects)
    unknown = [n for n in names if n not in data.subjects]
    if unknown:
        raise ValueError(f"unknown subject(s): {', '.join(unknown)}; see subjects.csv for the 57 names")
    return names


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
    elif not os.access(parent, os.W_OK):
        return f"cannot create files in {parent}"
    return None


def read_complete_rows(path: Path) -> tuple[list[dict], int]:
    """The rows of the file's complete lines, and the byte length they take (what to keep)."""
    rows, kept = [], 0
    with open(path, "rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                break  # torn by a kill mid-write
            try:
                rows.append(json.loads(line))
            except ValueError:
                break
            kept += len(line)
    return rows, kept


def characters(q) -> int:
    """A question's length in characters of its question and options: what its scoring costs, roughly."""
    return len(q.question) + sum(len(c) for c in q.choices)


def batches(data: MMLUData, questions: dict[str, list], shots: int, method: str, batch_size: int) -> list[list[dict]]:
    """The scorer's requests for ``questions`` (per subject), in batches of one subject each, the
    shortest questions first so that a batch's questions are of about one length."""
    jobs = []
    for subject, subject_questions in questions.items():
        shots_of = data.questions(subject, "dev")[:shots]
        ordered = sorted(subject_questions, key=characters)
        jobs += [[{"prompt_format": prompt, "subject": subject, "question": q.question, "choices": q.choices,
                   "shots": shots_of, "method": method, "key": q.answer, "index": q.index}
                  for q in ordered[start:start + batch_size]] for start in range(0, len(ordered), batch_size)]
    return jobs


def row_key(row: dict) -> tuple[str, str, int]:
    return row["subject"], row["split"], row["index"]


def evaluate(scorer: Scorer, data: MMLUData, subjects: list[str], split: str = "test", shots: int = 5,
             limit: int = 0, method: str = "letter", out: Path | None = None, progress: bool = True,
             resume: bool = False, batch_size: int = DEFAULT_BATCH_SIZE, workers: int = 1) -> dict:
    """Score the questions, append JSONL rows to ``out``, and return the summary of every row (see summarise).

    ``workers`` scorers on the same model score side by side (livescoring.pool), each taking the
    next batch when it is free; rows are written as batches finish, so their order varies.

    With ``resume``, the complete rows already in ``out`` are kept and their questions skipped; a
    run stopped by Ctrl-C leaves only complete rows (KeyboardInterrupt is re-raised)."""
    from tqdm import tqdm

    rows: list[dict] = []
    if resume and out is not None and out.exists():
        rows, kept = read_complete_rows(out)
        other = {(r["method"], r["split"]) for r in rows} - {(method, split)}
        if other:
            raise ValueError(f"{out} holds rows of another run ({sorted(other)}); resume it with the same options")
        with open(out, "r+b") as fh:
            fh.truncate(kept)
    done = {row_key(r) for r in rows}
    pending = {}
    for subject in subjects:
        questions = data.questions(subject, split)
        questions = questions[:limit] if limit else questions
        pending[subject] = [q for q in questions if (subject, split, q.index) not in done]
    jobs = batches(data, pending, shots, method, batch_size)
    scorers = [scorer] + [twin(scorer) for _ in range(workers - 1)]
    sink = open(out, "a" if resume else "w", encoding="utf-8") if out else None
    try:
        with tqdm(total=sum(map(len, jobs)), desc="scoring", unit="q", disable=not progress, file=sys.stderr,
                  smoothing=0.05) as bar:

            def write(job: list[dict], results: list[dict]) -> None:
                for request, result in zip(job, results, strict=True):
                    row = {
                        "subject": request["subject"], "split": split, "index": request["index"], "method": method,
                        "shots": result["shots_used"], "probabilities": result["probabilities"],
                        "prediction": result["prediction"], "key": request["key"], "correct": result["correct"],
                        "confidence": result["confidence"], "vocabulary_share": result["vocabulary_share"],
                        "model": result["model"]["name"],
                    }
                    rows.append(row)
                    if sink:
                        sink.write(json.dumps(row) + "\n")  # one write per whole line
                if sink:
                    sink.flush()
                bar.update(len(job))

            score_jobs(scorers, jobs, write)
    finally:
        if sink:
            sink.close()
    return summarise(rows)


def summarise(rows: list[dict]) -> dict:
    """Micro (per question) and macro (per subject) accuracy with 95 % intervals; RMS calibration error.

    The micro interval is the Wilson interval on all questions. The macro score is the plain mean
    of subject accuracies; its interval is the mean ± 1.96 × √(Σ SEₛ²) / S, the subjects' binomial
    standard errors combined as independent.
    """
    predictions = [r["prediction"] for r in rows]
    keys = [r["key"] for r in rows]
    subjects = [r["subject"] for r in rows]
    micro = explainers.accuracy(predictions, keys)
    per_subject = explainers.subject_accuracies(predictions, keys, subjects)
    macro = explainers.plain_mean([s["accuracy"] for s in per_subject.values()])
    variances = [explainers.standard_error(s["accuracy"], s["n"]) ** 2 for s in per_subject.values()]
    macro_se = math.sqrt(sum(variances)) / len(per_subject)
    z = explainers.normal_quantile(0.975)
    confidences = [r["confidence"] for r in rows]
    correct = [1 if r["correct"] else 0 for r in rows]
    letters = {letter: predictions.count(letter) for letter in "ABCD"}
    return {
        "questions": len(rows),
        "subjects": per_subject,
        "micro": {"accuracy": micro, "ci95": explainers.confidence_interval(micro, len(rows), 0.95, "wilson")},
        "macro": {"accuracy": macro, "ci95": (max(0.0, macro - z * macro_se), min(1.0, macro + z * macro_se))},
        "rms_calibration_error": explainers.rms_calibration_error(confidences, correct, min(CALIBRATION_BINS, len(rows))),
        "average_confidence": explainers.average_confidence(confidences),
        "predicted_letters": letters,
    }


def report(summary: dict) -> str:
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    micro, macro = summary["micro"], summary["macro"]
    lines = [
        f"Questions: {summary['questions']} in {len(summary['subjects'])} subject(s)",
        f"Micro accuracy (each question once): {pct(micro['accuracy'])}  "
        f"95% CI {pct(micro['ci95'][0])} to {pct(micro['ci95'][1])} (Wilson)",
        f"Macro accuracy (each subject once):  {pct(macro['accuracy'])}  "
        f"95% CI {pct(macro['ci95'][0])} to {pct(macro['ci95'][1])}",
        f"RMS calibration error: {pct(summary['rms_calibration_error'])} "
        f"(average confidence {pct(summary['average_confidence'])})",
        "Predicted letters: " + ", ".join(f"{k} {v}" for k, v in summary["predicted_letters"].items()),
        "Per subject:",
    ]
    lines += [f"  {name}: {pct(s['accuracy'])} of {s['n']}" for name, s in summary["subjects"].items()]
    return "\n".join(lines)


def resume_command(args: argparse.Namespace) -> str:
    """The command that continues this run where it stopped."""
    words = ["python", "-m", "engine", "mmlu", "evaluate", "--subjects", *args.subjects, "--split", args.split,
             "--shots", str(args.shots), "--limit", str(args.limit), "--method", args.method, "--out", str(args.out),
             "--batch-size", str(args.batch_size), "--workers", str(args.workers)]
    for option in ("model", "device", "dtype", "threads"):
        if getattr(args, option) is not None:
            words += [f"--{option}", str(getattr(args, option))]
    return shlex.join([*words, "--resume"])


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.shots <= MAX_SHOTS:
        print(f"error: --shots must be from 0 to {MAX_SHOTS}", file=sys.stderr)
        return 2
    if args.limit < 0:
        print("error: --limit must be 0 (all) or more", file=sys.stderr)
        return 2
    if args.batch_size < 1:
        print("error: --batch-size must be 1 or more", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("error: --workers must be 1 or more", file=sys.stderr)
        return 2
    if args.resume and args.force:
        print("error: --resume and --force contradict each other; choose one", file=sys.stderr)
        return 2
    problem = output_problem(args.out, args.resume, args.force)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    config = default_config()
    overrides = {"SCORER_MODEL": args.model, "SCORER_DEVICE": args.device, "SCORER_DTYPE": args.dtype,
                 "SCORER_THREADS": args.threads}
    config.update({k: v for k, v in overrides.items() if v is not None})
    data = MMLUData(data_dir(config))
    try:
        subjects = chosen_subjects(args.subjects, data)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        loaded = load(ModelSettings.from_config(config))
    except ModelUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    print(f"Model: {loaded.name} on {loaded.device} ({loaded.dtype}, {loaded.threads} thread(s)), loaded in "
          f"{loaded.load_seconds:.1f} s; method {args.method}; {args.shots}-shot; {args.split} split; "
          f"batches of {args.batch_size}; {args.workers} worker(s)", file=sys.stderr)
    try:
        summary = evaluate(Scorer(loaded, batch_rows=args.batch_size), data, subjects, args.split, args.shots,
                           args.limit, args.method, args.out, progress=not args.no_progress, resume=args.resume,
                           batch_size=args.batch_size, workers=args.workers)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        rows, _ = read_complete_rows(args.out) if args.out.exists() else ([], 0)
        print(f"\nInterrupted: {args.out} holds {len(rows)} complete rows. Continue with:\n  {resume_command(args)}",
              file=sys.stderr)
        return 130
    print(report(summary))
    print(f"{args.out} holds {summary['questions']} rows")
    return 0
