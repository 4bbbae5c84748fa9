"""``python -m engine mmlu-pro evaluate``: score real MMLU-Pro test questions with the live model.

Each question is scored by its letter probabilities (this paper's letter prompt, the category's
worked examples from the validation split). Writes one JSON line per question and prints the
overall accuracy and each category's, with Wilson 95 % intervals from ``explainers``. The JSONL
is written to a temporary file beside ``--out`` and moved into place at the end, so a killed run
leaves no half-written file.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import explainers
from engine.config import default_config
from livescoring.model import ModelSettings, ModelUnavailable, load
from livescoring.scorer import Scorer

from .. import prompt
from ..data import DataMissing
from . import data_dir
from .reader import MMLUProData


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--categories", nargs="+", default=["all"], metavar="CATEGORY",
                        help="category names (computer-science for 'computer science'), or 'all'")
    parser.add_argument("--shots", type=int, default=5, help=f"worked examples, 0 to {prompt.MAX_SHOTS} (default 5)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions per category (0: all)")
    parser.add_argument("--out", type=Path, default=Path("mmlu-pro-results.jsonl"), help="JSONL file to write")
    parser.add_argument("--model", help="override SCORER_MODEL (a local directory, a cached model id, or smollm2)")
    parser.add_argument("--device", help="override SCORER_DEVICE (auto, cpu, cuda)")
    parser.add_argument("--threads", type=int, help="override SCORER_THREADS (torch CPU threads)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def chosen_categories(names: list[str], data: MMLUProData) -> list[str]:
    if names == ["all"]:
        return list(data.categories)
    wanted = [name.replace("-", " ") for name in names]
    unknown = [name for name in wanted if name not in data.categories]
    if unknown:
        raise ValueError(f"unknown categor{'y' if len(unknown) == 1 else 'ies'}: {', '.join(unknown)}; "
                         f"use {', '.join(data.categories)}")
    return wanted


def evaluate(scorer: Scorer, data: MMLUProData, categories: list[str], shots: int = 5, limit: int = 0,
             progress: bool = True) -> list[dict]:
    """One row per scored question, in category order."""
    from tqdm import tqdm

    questions = [q for c in categories for q in (data.in_category(c)[:limit] if limit else data.in_category(c))]
    rows = []
    for q in tqdm(questions, desc="scoring", unit="q", disable=not progress, file=sys.stderr):
        result = scorer.score(prompt, q.category, q.question, q.options, data.shots(q.category, shots), "letter",
                              q.answer)
        rows.append({"question_id": q.question_id, "category": q.category, "index": q.index,
                     "options": len(q.options), "shots": result["shots_used"],
                     "probabilities": result["probabilities"], "prediction": result["prediction"], "key": q.answer,
                     "correct": result["correct"], "confidence": result["confidence"],
                     "model": result["model"]["name"]})
    return rows


def write_jsonl(rows: list[dict], out: Path) -> None:
    """Write the rows next to ``out`` first and move them into place, so ``out`` is whole or absent."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as sink:
            sink.writelines(json.dumps(row) + "\n" for row in rows)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def summarise(rows: list[dict]) -> dict:
    """Overall and per-category accuracy, each with its Wilson 95 % interval; the chance rate of the mix."""
    predictions, keys = [r["prediction"] for r in rows], [r["key"] for r in rows]
    overall = explainers.accuracy(predictions, keys)
    per_category = {}
    for category in dict.fromkeys(r["category"] for r in rows):
        mine = [r for r in rows if r["category"] == category]
        share = explainers.accuracy([r["prediction"] for r in mine], [r["key"] for r in mine])
        per_category[category] = {"n": len(mine), "accuracy": share,
                                  "ci95": explainers.confidence_interval(share, len(mine), 0.95, "wilson")}
    return {"questions": len(rows), "accuracy": overall,
            "ci95": explainers.confidence_interval(overall, len(rows), 0.95, "wilson"),
            "chance": explainers.plain_mean([1 / r["options"] for r in rows]), "categories": per_category}


def report(summary: dict) -> str:
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    lines = [f"Questions: {summary['questions']}",
             f"Accuracy: {pct(summary['accuracy'])}  95% CI {pct(summary['ci95'][0])} to {pct(summary['ci95'][1])} "
             f"(Wilson); chance for these questions {pct(summary['chance'])}", "Per category:"]
    lines += [f"  {name}: {pct(c['accuracy'])} of {c['n']} ({pct(c['ci95'][0])} to {pct(c['ci95'][1])})"
              for name, c in summary["categories"].items()]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.shots <= prompt.MAX_SHOTS or args.limit < 0:
        print(f"error: --shots must be 0 to {prompt.MAX_SHOTS} and --limit 0 or more", file=sys.stderr)
        return 2
    config = default_config()
    overrides = {"SCORER_MODEL": args.model, "SCORER_DEVICE": args.device, "SCORER_THREADS": args.threads}
    config.update({k: v for k, v in overrides.items() if v is not None})
    data = MMLUProData(data_dir(config))
    try:
        categories = chosen_categories(args.categories, data)
    except (ValueError, DataMissing) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        scorer = Scorer(load(ModelSettings.from_config(config)))
    except ModelUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    rows = evaluate(scorer, data, categories, args.shots, args.limit, progress=not args.no_progress)
    write_jsonl(rows, args.out)
    print(report(summarise(rows)))
    print(f"Wrote {len(rows)} rows to {args.out}")
    return 0
