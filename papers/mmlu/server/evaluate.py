"""``python -m engine mmlu evaluate``: run the live scorer over real MMLU questions.

Writes one JSON line per question (fields in README, "Live scoring") and prints micro and macro
accuracy with 95 % intervals and the RMS calibration error, all computed by ``explainers``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import explainers
from engine.config import default_config
from livescoring.model import ModelSettings, ModelUnavailable, load
from livescoring.scorer import METHODS, Scorer

from .. import prompt
from ..dataset import MMLUData
from ..prompt import MAX_SHOTS
from . import data_dir
from .validation import QUESTION_SPLITS

CALIBRATION_BINS = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--subjects", nargs="+", default=["all"], metavar="SUBJECT",
                        help="subject names (e.g. astronomy college_medicine), or 'all'")
    parser.add_argument("--split", choices=QUESTION_SPLITS, default="test")
    parser.add_argument("--shots", type=int, default=5, help=f"worked examples, 0 to {MAX_SHOTS} (default 5)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions per subject (0: all)")
    parser.add_argument("--method", choices=tuple(METHODS), default="letter")
    parser.add_argument("--out", type=Path, default=Path("mmlu-results.jsonl"), help="JSONL file to write")
    parser.add_argument("--model", help="override SCORER_MODEL (a local directory, a cached model id, or smollm2)")
    parser.add_argument("--device", help="override SCORER_DEVICE (auto, cpu, cuda)")
    parser.add_argument("--dtype", help="override SCORER_DTYPE (auto, float32, bfloat16, float16)")
    parser.add_argument("--threads", type=int, help="override SCORER_THREADS (torch CPU threads)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def chosen_subjects(names: list[str], data: MMLUData) -> list[str]:
    if names == ["all"]:
        return list(data.subjects)
    unknown = [n for n in names if n not in data.subjects]
    if unknown:
        raise ValueError(f"unknown subject(s): {', '.join(unknown)}; see subjects.csv for the 57 names")
    return names


def evaluate(scorer: Scorer, data: MMLUData, subjects: list[str], split: str = "test", shots: int = 5,
             limit: int = 0, method: str = "letter", out: Path | None = None, progress: bool = True) -> dict:
    """Score the questions, write JSONL rows to ``out``, and return the summary (see summarise)."""
    from tqdm import tqdm

    questions = [q for s in subjects for q in (data.questions(s, split)[:limit] if limit else data.questions(s, split))]
    rows = []
    sink = open(out, "w", encoding="utf-8") if out else None
    try:
        for q in tqdm(questions, desc="scoring", unit="q", disable=not progress, file=sys.stderr):
            shots_of = data.questions(q.subject, "dev")[:shots]
            result = scorer.score(prompt, q.subject, q.question, q.choices, shots_of, method, q.answer)
            row = {
                "subject": q.subject, "split": split, "index": q.index, "method": method,
                "shots": result["shots_used"], "probabilities": result["probabilities"],
                "prediction": result["prediction"], "key": q.answer, "correct": result["correct"],
                "confidence": result["confidence"], "vocabulary_share": result["vocabulary_share"],
                "model": result["model"]["name"],
            }
            rows.append(row)
            if sink:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
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


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.shots <= MAX_SHOTS:
        print(f"error: --shots must be from 0 to {MAX_SHOTS}", file=sys.stderr)
        return 2
    if args.limit < 0:
        print("error: --limit must be 0 (all) or more", file=sys.stderr)
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
          f"{loaded.load_seconds:.1f} s; method {args.method}; {args.shots}-shot; {args.split} split", file=sys.stderr)
    summary = evaluate(Scorer(loaded), data, subjects, args.split, args.shots, args.limit, args.method, args.out,
                       progress=not args.no_progress)
    print(report(summary))
    print(f"Wrote {summary['questions']} rows to {args.out}")
    return 0
