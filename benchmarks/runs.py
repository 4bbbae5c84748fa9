"""Per-question results of one evaluation run, read from the files two tools write.

Two formats, recognised line by line:

- this project's ``python -m benchmarks <benchmark> evaluate`` JSONL (the schema in benchmarks/runfile.py):
  one object per question with its group (``subject``, or MMLU-Pro's ``category``), ``split``,
  ``index`` and a true/false ``correct``; a question is (group, split, index), the split ``test``
  where a row written before the shared schema has none;
- lm-evaluation-harness's ``--log_samples`` files, ``samples_<task>_<date>.jsonl``: one object per
  document with ``doc_id`` (and ``doc``, ``target``, ``resps``, ``filtered_resps``, ``metrics``) and
  a per-document metric of 1.0 or 0.0: ``acc`` for letter tasks (``mmlu_<subject>``),
  ``exact_match`` for written answers (``mmlu_<subject>_generative``), or another the line's
  ``metrics`` list names; a question is (task, doc_id), its subject the task name without its
  benchmark's prefix (``mmlu_``, ``mmlu_pro_``: each task's ``harness_task_prefixes``, longest
  first) and the variant (``_generative``, ``_continuation``; older releases put it first,
  ``generative_``). The task comes from the file name, or from the line's ``task`` field where a
  file holds several tasks.

A run also notes its benchmark (benchmarks/registry.py), where its lines say: the one whose group
field an evaluate line holds, or whose prefix a harness task has.

Anything else is a :class:`RunFormatError` naming the file and the line. Standard library only:
the widget runs this module in the browser too.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from . import registry
from .runfile import LEGACY_DEFAULTS

MAX_LINES = 100_000  # questions per run; MMLU's whole test split is 14,042
MAX_FILE_LINES = 2 * MAX_LINES  # lines in one file, blank ones included: a file of line breaks is refused
# Where str.splitlines breaks a line ("\r\n" being one break): a file's lines are counted as they are
# split, so a file of "\r" or "\x1c" is as many lines as a file of "\n", and refused as soon.
LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
HARNESS_FILE = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.:_-]+)\.jsonl$")
TASK_SUFFIXES = ("_generative", "_continuation")  # lm_eval 0.4: mmlu_astronomy_generative
# The per-document metrics read first, before any other a line's ``metrics`` list names.
HARNESS_METRICS = ("acc", "exact_match")


class RunFormatError(ValueError):
    """A run file that is neither format, with the file and line named."""


@dataclass(frozen=True)
class Run:
    """One run: each question's score (1.0 right, 0.0 wrong) and subject, keyed by question."""

    format: str  # "evaluate" or "harness"
    scores: dict  # question key (a tuple) -> score
    subjects: dict  # question key -> subject name
    metric: str = "correct"  # what each score is: evaluate's "correct", or the harness metric read
    benchmark: str | None = None  # the benchmark's name (registry), where the lines say which

    def __len__(self) -> int:
        return len(self.scores)


def count_line_breaks(text: str) -> int:
    """The line breaks str.splitlines finds in ``text``, counted without splitting it."""
    return sum(map(text.count, LINE_BREAKS)) - text.count("\r\n")


def too_many_lines(where: str) -> RunFormatError:
    """The error for a file (or paste) of more than MAX_FILE_LINES lines, ``where`` naming it."""
    return RunFormatError(f"{where}: more than {MAX_FILE_LINES:,} lines; a run holds at most {MAX_LINES:,} questions")


def _task_prefix(task: str) -> tuple[str, str] | None:
    """(prefix, benchmark) of the benchmark whose harness task prefix ``task`` starts with, the
    longest first (registry.harness_prefixes); None for a task of no benchmark here."""
    return next(((prefix, name) for prefix, name in registry.harness_prefixes()
                 if task.startswith(prefix) and len(task) > len(prefix)), None)


def subject_of_task(task: str) -> str:
    """The subject a harness task scores: ``mmlu_abstract_algebra`` and
    ``mmlu_abstract_algebra_generative`` → ``abstract_algebra``, ``mmlu_pro_law`` → ``law``."""
    found = _task_prefix(task)
    if found is None:
        return task
    task = task[len(found[0]):]
    for suffix in TASK_SUFFIXES:
        if task.endswith(suffix) and len(task) > len(suffix):
            return task[:-len(suffix)]
    return task


def benchmark_of_task(task: str) -> str | None:
    """The benchmark a harness task belongs to (``mmlu_pro_law`` → ``mmlu_pro``); None if none here."""
    found = _task_prefix(task)
    return found[1] if found else None


def task_of_file(name: str) -> str | None:
    """The task in a harness sample file's name, or None when the name is not of that form."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    match = HARNESS_FILE.match(base)
    return match.group("task") if match else None


def _score(value: object, where: str, field: str) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and value in (0, 1):
        return float(value)
    raise RunFormatError(f"{where}: {field!r} must be 0 or 1 (true or false), got {value!r}")


def _evaluate_row(row: dict, where: str) -> tuple[tuple, str, float, str, str | None]:
    field = next(name for name in registry.group_fields() if name in row)
    subject, split, index = row[field], row.get("split", LEGACY_DEFAULTS["split"]), row.get("index")
    if not isinstance(subject, str) or not subject:
        raise RunFormatError(f"{where}: {field!r} must be a {field} name, got {subject!r}")
    if not isinstance(split, str) or not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise RunFormatError(f"{where}: an evaluate line needs 'split' (text) and 'index' (a whole number)")
    return (("evaluate", subject, split, index), subject, _score(row.get("correct"), where, "correct"), "correct",
            registry.of_group_field(field))


def _harness_row(row: dict, where: str, file_task: str | None) -> tuple[tuple, str, float, str, str | None]:
    task = row.get("task", file_task)
    if not isinstance(task, str) or not task:
        raise RunFormatError(f"{where}: no task: name the file samples_<task>_<date>.jsonl as the harness does")
    doc_id = row.get("doc_id")
    if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
        raise RunFormatError(f"{where}: 'doc_id' must be a whole number, got {doc_id!r}")
    metric = _harness_metric(row, where)
    return ("harness", task, doc_id), subject_of_task(task), _score(row[metric], where, metric), metric, \
        benchmark_of_task(task)


def _harness_metric(row: dict, where: str) -> str:
    """The per-document metric a harness line is scored by: ``acc``, else ``exact_match``, else the
    first one its ``metrics`` list names that the line holds."""
    listed = row.get("metrics") if isinstance(row.get("metrics"), list) else []
    for name in (*HARNESS_METRICS, *(m for m in listed if isinstance(m, str))):
        if name in row:
            return name
    raise RunFormatError(
        f"{where}: a harness sample line needs a per-document metric of 0 or 1: 'acc' (letter tasks such as "
        f"mmlu_anatomy), 'exact_match' (written answers, mmlu_anatomy_generative) or one its 'metrics' list names")


def _parse_line(line: str, where: str, file_task: str | None) -> tuple[tuple, str, float, str, str | None]:
    """(question key, subject, score, the metric the score is, its benchmark or None) of one line."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        # the position finishes the message: "Unterminated string starting at" names no place of its own
        place = f"column {error.colno}" if error.msg.endswith(" at") else f"at column {error.colno}"
        raise RunFormatError(f"{where}: not valid JSON ({error.msg} {place})") from None
    except ValueError:  # not a syntax error: an integer longer than Python converts (4,300 digits)
        raise RunFormatError(f"{where}: a number with thousands of digits; a run line's numbers are short") from None
    except RecursionError:
        raise RunFormatError(f"{where}: JSON nested too deeply (a run line is one flat object)") from None
    if not isinstance(row, dict):
        raise RunFormatError(f"{where}: each line must be a JSON object")
    if "doc_id" in row:
        return _harness_row(row, where, file_task)
    if "correct" in row and any(name in row for name in registry.group_fields()):
        return _evaluate_row(row, where)
    raise RunFormatError(
        f"{where}: neither an evaluate line (subject, split, index, correct) nor a harness sample line "
        f"(doc_id, and a metric such as acc or exact_match)")


def read_run(files: list[tuple[str, str | Iterable[str]]]) -> Run:
    """Read one run from one or more files, given as (file name, text) pairs (or (file name, its
    lines), an iterable read once: the gate command streams big files rather than holding them).

    A harness run usually spans one file per task; an evaluate run is one file. Blank lines are
    skipped; a question that appears twice, a line that is not a JSON object, or a file that
    mixes the two formats is an error naming the line.
    """
    if not files:
        raise RunFormatError("no run files given")
    scores: dict = {}
    subjects: dict = {}
    formats: set[str] = set()
    benchmarks: set[str | None] = set()
    metrics: dict[str, str] = {}  # each metric read, and the first line read by it
    for name, text in files:
        file_task = task_of_file(name)
        if isinstance(text, str) and count_line_breaks(text) > MAX_FILE_LINES:
            raise too_many_lines(name)
        for number, line in enumerate(text.splitlines() if isinstance(text, str) else text, 1):
            if not line.strip():
                continue
            where = f"{name} line {number}"
            key, subject, score, metric, benchmark = _parse_line(line, where, file_task)
            formats.add(key[0])
            benchmarks.add(benchmark)
            if len(formats) > 1:
                raise RunFormatError(f"{where}: this run mixes evaluate lines and harness sample lines")
            metrics.setdefault(metric, where)
            if len(metrics) > 1:
                (first, first_where), *_ = metrics.items()
                raise RunFormatError(
                    f"{where}: scored by '{metric}', but {first_where} by '{first}': load letter scores "
                    f"(acc) and written answers (exact_match) as separate pairs")
            if key in scores:
                raise RunFormatError(f"{where}: question {key[1:]} appears twice in this run")
            if len(scores) >= MAX_LINES:
                raise RunFormatError(f"{where}: a run may hold at most {MAX_LINES:,} questions")
            scores[key] = score
            subjects[key] = subject
    if not scores:
        raise RunFormatError("the run files hold no questions")
    return Run(formats.pop(), scores, subjects, next(iter(metrics)), benchmarks.pop() if len(benchmarks) == 1 else None)


def pair_runs(production: Run, candidate: Run) -> dict:
    """The questions both runs answered, in a fixed order: {"subjects", "baseline", "candidate", "dropped"}.

    ``dropped`` counts the questions only one of the runs holds (they cannot be paired).
    """
    if production.format != candidate.format:
        raise RunFormatError(
            f"the production run is {production.format} output and the candidate run {candidate.format} "
            "output; compare two runs of the same tool (their question ids differ)")
    if production.metric != candidate.metric:
        raise RunFormatError(
            f"the production run is scored by '{production.metric}' and the candidate run by "
            f"'{candidate.metric}'; compare two runs scored the same way")
    shared = sorted(production.scores.keys() & candidate.scores.keys())
    if len(shared) < 2:
        raise RunFormatError(f"the two runs share {len(shared)} question(s); the gate needs at least 2")
    return {
        "subjects": [production.subjects[key] for key in shared],
        "baseline": [production.scores[key] for key in shared],
        "candidate": [candidate.scores[key] for key in shared],
        "dropped": len(production.scores) + len(candidate.scores) - 2 * len(shared),
    }
