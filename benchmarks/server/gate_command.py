"""``python -m benchmarks gate``: the release gate on two runs a team already has, of any benchmark
(its old command line, through the scoring lesson's document, still runs it).

Each run is one file of ``python -m benchmarks <benchmark> evaluate`` output (``.jsonl``, or
``.jsonl.gz`` as a benchmark's runs/ folder publishes them), or one or more
lm-evaluation-harness ``samples_<task>_<date>.jsonl`` files (pass them all). The subject groups
(for the knowledge-regression shape) are those of the runs' benchmark: its server package's
``gate_groups()``, found through benchmarks/registry.py. Prints the paired
delta, its naive, paired and subject-clustered standard errors (CR0 and CR1), the error and band
the verdict rests on (with the few-subjects warning under 20 subjects), the per-subject deltas
sorted with the gate's band, the verdict and the shape; ``--json`` prints the same as one object
(``few_subjects``, ``gate_se``, ``gate_se_basis``, ``critical``, ``df`` and ``band`` among its keys).
Exit status: 0 ship, 1 investigate, 2 unreadable input (with the file and line named), 3 too little
data to decide (the band wider than ±5 points: never 0, so a script that ships on 0 does not ship
on runs too small to tell). Harness files are scored by their per-document ``acc`` (letter tasks),
``exact_match`` (written answers, ``mmlu_<subject>_generative``) or another 0/1 metric their
``metrics`` list names, as in the widget (benchmarks/runs.py).
"""
from __future__ import annotations

import argparse
import codecs
import gzip
import json
import sys
import zlib

from benchmarks import registry
from benchmarks.gate import compare, report_lines
from benchmarks.runs import LINE_BREAKS, MAX_FILE_LINES, RunFormatError, count_line_breaks, pair_runs, read_run, too_many_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--production", nargs="+", required=True, metavar="FILE", help="the production run")
    parser.add_argument("--candidate", nargs="+", required=True, metavar="FILE", help="the candidate run")
    parser.add_argument("--generative-production", nargs="+", metavar="FILE",
                        help="optional: the production model's generative run (the main pair being letter scoring)")
    parser.add_argument("--generative-candidate", nargs="+", metavar="FILE")
    parser.add_argument("--holdout-production", nargs="+", metavar="FILE",
                        help="optional: both models on held-out questions (questions that are not public, such as a private set)")
    parser.add_argument("--holdout-candidate", nargs="+", metavar="FILE")
    parser.add_argument("--no-groups", action="store_true",
                        help="do not read the benchmark's subject groups (then no knowledge-regression shape)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


# What one run file may hold, decompressed: a 1 MB .gz can expand to 1 GiB, so a file is read a
# block at a time, never whole, and refused (exit 2) past these bounds. MMLU's whole test split in
# evaluate lines is about 4 MB; a harness task's sample log tens of MB (its prompts are in it).
MAX_FILE_BYTES = 256 * 2**20
MAX_LINE_CHARS = 4 * 2**20
_BLOCK = 2**20
# A line that ends in a break other than a lone "\r" is whole; a last "\r" may be the first half of
# a "\r\n" the next block finishes, so its line waits for that block.
_WHOLE = tuple(b for b in LINE_BREAKS if b != "\r")
# The per-subject table: MMLU has 57 subjects, the longest name 35 characters. A run with more rows
# is shown at its two ends, and a longer name cut, so the output stays small whatever the files hold.
NAME_WIDTH = 48
MAX_ROWS = 100
MAX_MESSAGE = 2_000  # characters of an error message (one may quote a line of the file)
EXIT_STATUS = {"ship": 0, "investigate": 1, "too little data": 3}  # 2: the runs could not be read


def _lines(path: str):
    """The lines of one run file as text, split where str.splitlines splits them, read a block at a
    time (a ``.gz`` decompressed as it is read); a RunFormatError naming the file (and the line) when
    it cannot be read or is too big. Lines are counted before they are split, so a file of line breaks
    is refused after its first block, whichever break it uses."""
    opener = gzip.open if path.endswith(".gz") else open
    decoder = codecs.getincrementaldecoder("utf-8")()
    number, total, rest = 0, 0, ""
    try:
        with opener(path, "rb") as stream:
            while block := stream.read(_BLOCK):
                total += len(block)
                if total > MAX_FILE_BYTES:
                    raise RunFormatError(f"{path}: more than {MAX_FILE_BYTES // 2**20} MiB (decompressed); "
                                         "a run file is never that big: is it the right file?")
                text = rest + _decoded(decoder, block, path, number, rest)
                if number + count_line_breaks(text) - text.endswith("\r") > MAX_FILE_LINES:
                    raise too_many_lines(path)
                lines = text.splitlines(keepends=True)
                rest = lines.pop() if lines and not lines[-1].endswith(_WHOLE) else ""
                for line in lines:
                    number += 1
                    yield _checked(line.splitlines()[0], path, number)
                if len(rest) > MAX_LINE_CHARS:
                    raise RunFormatError(f"{path} line {number + 1}: longer than {MAX_LINE_CHARS:,} characters")
            rest += _decoded(decoder, b"", path, number, rest, final=True)
    except (OSError, EOFError, zlib.error) as error:
        raise RunFormatError(f"{path}: cannot read it ({error})") from None
    if rest:  # the last line, without a break after it (or with the "\r" that waited)
        if number >= MAX_FILE_LINES:
            raise too_many_lines(path)
        yield _checked(rest.splitlines()[0], path, number + 1)


def _decoded(decoder, block: bytes, path: str, number: int, rest: str, final: bool = False) -> str:
    """``block`` decoded as UTF-8 (a character cut by the block's end waits in ``decoder``); an error
    names the line of the first byte that is not UTF-8."""
    try:
        return decoder.decode(block, final)
    except UnicodeDecodeError as error:
        line = number + count_line_breaks(rest + error.object[:error.start].decode("utf-8")) + 1
        raise RunFormatError(f"{path} line {line}: cannot read it (not UTF-8 text: {error.reason})") from None


def _checked(line: str, path: str, number: int) -> str:
    if len(line) > MAX_LINE_CHARS:
        raise RunFormatError(f"{path} line {number}: longer than {MAX_LINE_CHARS:,} characters")
    return line


def _read(paths: list[str]):
    """One run from its files; a ``.gz`` file (as the MMLU paper publishes its runs) is decompressed."""
    return read_run([(path.removesuffix(".gz"), _lines(path)) for path in paths])


def _optional_pair(args, name: str) -> dict | None:
    production, candidate = getattr(args, f"{name}_production"), getattr(args, f"{name}_candidate")
    if bool(production) != bool(candidate):
        raise RunFormatError(f"give both --{name}-production and --{name}-candidate, or neither")
    return pair_runs(_read(production), _read(candidate)) if production else None


def printable(text: str) -> str:
    """``text`` with each character a terminal could act on or hide behind escaped as Python writes it
    (``\\x1b`` for ESC): C0 and C1 controls, DEL, line and paragraph separators, bidirectional
    overrides, lone surrogates. A subject name is the run file's to choose, and is printed."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _name(subject: str) -> str:
    """A subject's name as its table cell: printable, and at most NAME_WIDTH characters (cut with "…")."""
    cell = printable(subject[:NAME_WIDTH + 1])  # escaping only lengthens: no need to look further
    return cell if len(cell) <= NAME_WIDTH else cell[:NAME_WIDTH - 1] + "…"


def subject_table(report: dict) -> list[str]:
    """The per-subject deltas, smallest first, with where each falls against the gate's band; past
    MAX_ROWS subjects, the smallest and the largest with a line saying how many are left out."""
    low, high = report["delta"] - report["band"], report["delta"] + report["band"]
    rows = report["subject_rows"]
    shown = rows if len(rows) <= MAX_ROWS else rows[:MAX_ROWS // 2] + rows[-(MAX_ROWS // 2):]
    names = [_name(row["subject"]) for row in shown]
    width = max(map(len, names))
    lines = [f"Per-subject deltas, smallest first (points; the gate's band ±{report['band'] * 100:.2f} "
             f"around {report['delta'] * 100:+.2f}):"]
    for i, (name, row) in enumerate(zip(names, shown, strict=True)):
        if len(rows) > MAX_ROWS and i == MAX_ROWS // 2:
            lines.append(f"  … {len(rows) - MAX_ROWS:,} subjects left out here (--json lists them all)")
        where = "below band" if row["delta"] < low else "above band" if row["delta"] > high else "in band"
        lines.append(f"  {name:<{width}}  {row['delta'] * 100:+7.2f}  n={row['n']:<5} {where}")
    return lines


def gate_groups(benchmark: str | None) -> dict[str, str]:
    """Subject → group of the runs' benchmark (empty when the runs do not say which, or its data is
    not here)."""
    return registry.server(benchmark).gate_groups() if benchmark else {}


def run(args: argparse.Namespace) -> int:
    try:
        production, candidate = _read(args.production), _read(args.candidate)
        pair = pair_runs(production, candidate)
        generative, holdout = _optional_pair(args, "generative"), _optional_pair(args, "holdout")
        groups = None if args.no_groups else gate_groups(production.benchmark or candidate.benchmark)
        report = compare(pair, groups, generative, holdout)
        # JSON escapes every control character itself (ensure_ascii), and holds each subject once
        out = json.dumps(report, indent=1) if args.json else "\n".join([*report_lines(report), "", *subject_table(report)])
    except (RunFormatError, ValueError) as error:
        return _refuse(str(error))
    except Exception as error:  # anything else is a file the gate did not foresee: exit 2, never 1 ("investigate")
        return _refuse(f"the runs could not be read ({type(error).__name__}: {error}); check the files")
    print(out)
    return EXIT_STATUS[report["verdict"]]


def _refuse(message: str) -> int:
    """Exit status 2 with ``message`` on one line of stderr, printable and at most MAX_MESSAGE characters."""
    message = printable(message)
    print(f"error: {message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 1] + '…'}", file=sys.stderr)
    return 2
