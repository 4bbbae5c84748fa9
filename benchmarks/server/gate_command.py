"""``python -m engine scoring-lesson gate``: the release gate on two runs a team already has.

Each run is one file of ``python -m engine mmlu evaluate`` output (``.jsonl``, or ``.jsonl.gz`` as
benchmarks/mmlu/runs/ publishes them), or one or more
lm-evaluation-harness ``samples_<task>_<date>.jsonl`` files (pass them all). Prints the paired
delta, its naive, paired and subject-clustered standard errors (CR0 and CR1), the error and band
the verdict rests on (with the few-subjects warning under 20 subjects), the per-subject deltas
sorted with the gate's band, the verdict and the shape; ``--json`` prints the same as one object
(``few_subjects``, ``gate_se``, ``gate_se_basis``, ``critical``, ``df`` and ``band`` among its keys).
Exit status: 0 ship, 1 investigate, 2 unreadable input (with the file and line named).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import zlib

from benchmarks.gate import compare, report_lines
from benchmarks.mmlu.server import data_dir, subject_groups
from benchmarks.runs import MAX_LINES, RunFormatError, pair_runs, read_run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--production", nargs="+", required=True, metavar="FILE", help="the production run")
    parser.add_argument("--candidate", nargs="+", required=True, metavar="FILE", help="the candidate run")
    parser.add_argument("--generative-production", nargs="+", metavar="FILE",
                        help="optional: the production model's generative run (the main pair being letter scoring)")
    parser.add_argument("--generative-candidate", nargs="+", metavar="FILE")
    parser.add_argument("--holdout-production", nargs="+", metavar="FILE",
                        help="optional: both models on a held-out set (MMLU-Pro, MMLU-CF or private)")
    parser.add_argument("--holdout-candidate", nargs="+", metavar="FILE")
    parser.add_argument("--no-groups", action="store_true",
                        help="do not read MMLU's subject groups (then no knowledge-regression shape)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


# What one run file may hold, decompressed: a 1 MB .gz can expand to 1 GiB, so a file is read a
# block at a time, never whole, and refused (exit 2) past these bounds. MMLU's whole test split in
# evaluate lines is about 4 MB; a harness task's sample log tens of MB (its prompts are in it).
MAX_FILE_BYTES = 256 * 2**20
MAX_LINE_BYTES = 4 * 2**20
MAX_FILE_LINES = 2 * MAX_LINES  # blank lines included (a file of newlines is read fast, but not forever)
_BLOCK = 2**20


def _lines(path: str):
    """The lines of one run file as text, read a block at a time (a ``.gz`` decompressed as it is
    read); a RunFormatError naming the file (and the line) when it cannot be read or is too big."""
    opener = gzip.open if path.endswith(".gz") else open
    number, total, rest = 0, 0, b""
    try:
        with opener(path, "rb") as stream:
            while block := stream.read(_BLOCK):
                total += len(block)
                if total > MAX_FILE_BYTES:
                    raise RunFormatError(f"{path}: more than {MAX_FILE_BYTES // 2**20} MiB (decompressed); "
                                         "a run file is never that big: is it the right file?")
                if number + block.count(b"\n") > MAX_FILE_LINES:
                    raise RunFormatError(f"{path}: more than {MAX_FILE_LINES:,} lines; a run holds at most "
                                         f"{MAX_LINES:,} questions")
                *whole, rest = (rest + block).split(b"\n")
                for raw in whole:
                    number += 1
                    yield from _decoded(raw, path, number)
                if len(rest) > MAX_LINE_BYTES:
                    raise RunFormatError(f"{path} line {number + 1}: longer than {MAX_LINE_BYTES // 2**20} MiB")
    except (OSError, EOFError, zlib.error) as error:
        raise RunFormatError(f"{path}: cannot read it ({error})") from None
    if rest:
        yield from _decoded(rest, path, number + 1)


def _decoded(raw: bytes, path: str, number: int):
    if len(raw) > MAX_LINE_BYTES:
        raise RunFormatError(f"{path} line {number}: longer than {MAX_LINE_BYTES // 2**20} MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RunFormatError(f"{path} line {number}: cannot read it ({error})") from None
    yield from text.splitlines() or [""]  # as str.splitlines splits a whole file (also at \r)


def _read(paths: list[str]):
    """One run from its files; a ``.gz`` file (as the MMLU paper publishes its runs) is decompressed."""
    return read_run([(path.removesuffix(".gz"), _lines(path)) for path in paths])


def _optional_pair(args, name: str) -> dict | None:
    production, candidate = getattr(args, f"{name}_production"), getattr(args, f"{name}_candidate")
    if bool(production) != bool(candidate):
        raise RunFormatError(f"give both --{name}-production and --{name}-candidate, or neither")
    return pair_runs(_read(production), _read(candidate)) if production else None


def run(args: argparse.Namespace) -> int:
    try:
        pair = pair_runs(_read(args.production), _read(args.candidate))
        generative, holdout = _optional_pair(args, "generative"), _optional_pair(args, "holdout")
        report = compare(pair, None if args.no_groups else subject_groups(data_dir(None)), generative, holdout)
    except (RunFormatError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (MemoryError, RecursionError) as error:  # never 1, which means "investigate"
        print(f"error: the runs could not be read ({type(error).__name__}); check the files", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print("\n".join(report_lines(report)))
        print()
        print(f"Per-subject deltas, smallest first (points; the gate's band ±{report['band'] * 100:.2f} "
              f"around {report['delta'] * 100:+.2f}):")
        low, high = report["delta"] - report["band"], report["delta"] + report["band"]
        width = max(len(row["subject"]) for row in report["subject_rows"])
        for row in report["subject_rows"]:
            where = "below band" if row["delta"] < low else "above band" if row["delta"] > high else "in band"
            print(f"  {row['subject']:<{width}}  {row['delta'] * 100:+7.2f}  n={row['n']:<5} {where}")
    return 1 if report["verdict"] == "investigate" else 0
