"""The live model's published runs over the whole MMLU test set (benchmarks/mmlu/runs/*.jsonl.gz).

The files are this project's own output, written by ``python -m benchmarks mmlu evaluate`` (one JSON
object per question; the README says how to make them again). The widgets never see the rows:
they get :func:`widget_context`, made once at start-up, with every figure they draw already computed
by ``explainers/`` from the rows, in three parts so that a page carries only what its widget draws:
``live_scores`` (accuracy per subject and group), ``live_calibration`` (the calibration groups for
every setting the calibration widget offers) and ``live_pairs`` (each question's right/wrong mark,
packed as a string of "0" and "1" in one question order shared by all runs, for the release gate).

A folder with no runs is not an error (the widgets then show only the paper's figures); a
published file that is not a complete test run is refused (logged, and the widgets show only the
paper's figures; the test suite also checks the published files): a partial run must never be
drawn as if it were the model's score.
"""
from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

from benchmarks.flips import answer_of_row, pair_answers
from benchmarks.live_runs import LETTER, MAX_BINS, run_key
from benchmarks.server.runfile import first_row, iter_lines, iter_rows, one_run, row_of
from explainers import calibration

from ..data import DataMissing
from ..groups import BY_NAME
from .reader import MMLUData

log = logging.getLogger(__name__)
RUNS_DIR = Path(__file__).resolve().parent.parent / "runs"
FILE_PATTERN = "*.jsonl.gz"


# What a run's summary and its checks read of each row: the rest (the letters' probabilities above
# all) is left in the file, so four runs of 14,042 rows are summarised in a few MiB (issue 36).
SUMMARY_FIELDS = ("subject", "split", "index", "method", "shots", "model", "correct", "confidence")


class PublishedRunError(ValueError):
    """A published run file that cannot be drawn (incomplete, mixed, or not this project's format)."""


def _checked(path: Path) -> dict:
    """The run's rows, their SUMMARY_FIELDS only, keyed by (subject, index): one setting, no question
    twice (whether they are the whole test set is _summarised's check, where the data folder is known)."""
    rows = [{name: row.get(name) for name in SUMMARY_FIELDS} for row in iter_rows(path)]
    return one_run(path, rows, PublishedRunError)


def _calibration_table(confidences: list[float], correct: list[int]) -> dict:
    """What the calibration widget shows for every binning and group count it offers."""
    table = {}
    for binning in calibration.BINNINGS:
        groups = calibration.calibration_bins_for_each_count(confidences, correct, MAX_BINS, binning)
        table[binning] = [{"groups": g, "rms": calibration.rms_of_groups(g)} for g in groups]
    return table


def _run_summary(rows_by_key: dict, order: list[tuple[str, int]]) -> dict:
    ordered = [rows_by_key[key] for key in order]
    first = ordered[0]
    correct = [int(bool(r["correct"])) for r in ordered]
    confidences = [r["confidence"] for r in ordered]
    subjects: dict[str, list[int]] = {}
    for row, right in zip(ordered, correct, strict=True):
        tally = subjects.setdefault(row["subject"], [0, 0])
        tally[0] += right
        tally[1] += 1
    method = first.get("method", LETTER)
    about = {"key": run_key(first["shots"], method), "shots": first["shots"], "method": method,
             "questions": len(ordered), "correct": sum(correct)}
    return {
        "scores": {**about, "subjects": subjects},  # and "groups", which _summarised adds
        # Only letter scoring has probabilities to calibrate: a generative row has no confidence.
        "calibration": {**about, "average_confidence": calibration.average_confidence(confidences),
                        "gap": calibration.calibration_gap(confidences, correct),
                        "table": _calibration_table(confidences, correct)} if method == LETTER else None,
        "pairs": {**about, "marks": "".join(map(str, correct))},
        "model": first["model"],
    }


def widget_context(data: MMLUData | None, folder: Path = RUNS_DIR) -> dict:
    """``live_scores``, ``live_calibration`` and ``live_pairs`` (see the module's docstring) for the
    published runs, lowest shot count first; an empty dict when none is published.

    With the dataset, each run must hold every test question exactly once, and scores are also
    tallied by group; without it (a reader of the runs that has no MMLU files, such as the scoring
    lesson on a machine without them), the runs must hold the same questions as each other.
    ``live_pairs["order"]`` lists [subject, questions] in the order every run's ``marks`` follow:
    subjects alphabetically, each subject's questions by their row number in its test file.
    """
    files = sorted(folder.glob(FILE_PATTERN)) if folder.is_dir() else []
    if not files:
        return {}
    if data is not None:
        try:  # a damaged or partial data folder cannot vouch for the runs: check them against each other
            [data.questions(name, "test") for name in data.subjects]
        except DataMissing as error:
            log.warning("published runs checked without the test set (%s)", error)
            data = None
    # Summarising two whole runs takes seconds, and every app (each test makes several) asks for it:
    # the result is kept for as long as the files and the data folder stay the same.
    signature = tuple((path.name, path.stat().st_size, path.stat().st_mtime_ns) for path in files)
    try:
        return _summarised(tuple(files), signature, data.root if data is not None else None)
    except PublishedRunError as error:  # the site stays up; the widgets show the paper's figures only
        log.error("published runs not shown: %s", error)
        return {}


@lru_cache(maxsize=4)
def _summarised(files: tuple[Path, ...], signature: tuple, root: Path | None) -> dict:
    """widget_context's answer for these files (``signature``: their names, sizes and times) and data
    folder; shared by every caller, so callers treat it as read-only, as widget views do."""
    data = MMLUData(root) if root is not None else None
    order, context = _summaries(files, signature)
    subject_group = {}
    if data is not None:
        subjects = data.subjects
        expected = {(name, q.index) for name in subjects for q in data.questions(name, "test")}
        if set(order) != expected:  # every run holds the questions of the first (_summaries' check)
            raise PublishedRunError(f"{files[0].name} is not one complete test run: {len(order)} distinct questions, "
                                    f"the test set has {len(expected)}")
        subject_group = {name: BY_NAME[s.group].key for name, s in subjects.items()}
    return {**context, "live_scores": {**context["live_scores"], "runs": [
        {**run, "groups": _group_tallies(run["subjects"], subject_group)} for run in context["live_scores"]["runs"]]}}


def _group_tallies(subjects: dict[str, list[int]], subject_group: dict[str, str]) -> dict[str, list[int]]:
    """[right, questions] per group (of the subjects the data names), in the order the subjects come."""
    groups: dict[str, list[int]] = {}
    for subject, (right, questions) in subjects.items():
        if subject in subject_group:
            tally = groups.setdefault(subject_group[subject], [0, 0])
            tally[0] += right
            tally[1] += questions
    return groups


@lru_cache(maxsize=4)
def _summaries(files: tuple[Path, ...], signature: tuple):
    """(the runs' question keys, sorted; the widgets' context without group tallies): the seconds-long
    part of _summarised, which depends on the files only, so that another data folder (the tests make
    several copies, some damaged) checks its questions and groups its subjects without reading the
    runs again. One run is read at a time, and only its summary is kept."""
    order, summaries = None, []
    for path in files:
        rows = _checked(path)
        if order is None:
            order = tuple(sorted(rows))
        elif rows.keys() != set(order):
            raise PublishedRunError("the published runs do not hold the same questions")
        summaries.append(_run_summary(rows, order))
    # Letter runs first (the ones the score and calibration widgets draw), fewest shots first.
    runs = sorted(summaries, key=lambda run: (run["scores"]["method"] != LETTER, run["scores"]["shots"]))
    letter = [run for run in runs if run["scores"]["method"] == LETTER]
    models = {run["model"] for run in runs}
    if len(models) != 1:
        raise PublishedRunError(f"the published runs come from {len(models)} different models")
    model = models.pop()
    sizes: dict[str, int] = {}
    for subject, _ in order:
        sizes[subject] = sizes.get(subject, 0) + 1
    return order, {
        "live_scores": {"model": model, "runs": [run["scores"] for run in letter]},
        "live_calibration": {"model": model, "runs": [run["calibration"] for run in letter]},
        "live_pairs": {"model": model, "order": [[name, size] for name, size in sizes.items()],
                       "runs": [run["pairs"] for run in runs]},
    }


def published_answer(subject: str, index: int, folder: Path = RUNS_DIR) -> dict | None:
    """The published run's row for one test question (from the letter run with the fewest worked
    examples, the live form's default), or None where no run is published: the live widget prints it as its
    example result, since paper cannot run the model."""
    files = sorted(folder.glob(FILE_PATTERN)) if folder.is_dir() else []
    if not files:
        return None
    signature = tuple((path.name, path.stat().st_size, path.stat().st_mtime_ns) for path in files)
    line = _answers(tuple(files), signature).get((subject, index))
    return None if line is None else row_of(line)


@lru_cache(maxsize=1)
def _answers(files: tuple[Path, ...], signature: tuple) -> dict[tuple[str, int], str]:
    """published_answer's rows for these files, by (subject, index), each kept as its line (a row read
    into dicts takes about three times the memory): only the chosen run is read (each run's settings
    are on its first line)."""
    letter = [(first["shots"], path) for path, first in ((path, first_row(path)) for path in files)
              if first and first.get("method", LETTER) == LETTER]
    found = {}
    for line in iter_lines(min(letter)[1]) if letter else ():
        row = row_of(line)
        if row["split"] == "test":
            found[(row["subject"], row["index"])] = line
    return found


class PublishedAnswers:
    """Every published run's answers with each question's text, for the flips view
    (benchmarks/flips_widget.py): ``runs`` lists [key, label] fewest shots first, letter runs first;
    :meth:`paired` pairs two of them as the gate does. A server object: it never leaves the server."""

    def __init__(self, data: MMLUData | None, folder: Path = RUNS_DIR):
        self.data = data
        self.files = tuple(sorted(folder.glob(FILE_PATTERN))) if folder.is_dir() else ()
        firsts = [(path, first_row(path)) for path in self.files]
        found = sorted(((run_key(first["shots"], first.get("method", LETTER)), path, first) for path, first in firsts
                        if first), key=lambda item: (item[2].get("method", LETTER) != LETTER, item[2]["shots"]))
        self.paths = {key: path for key, path, _ in found}
        self.runs = [[key, f"our {key} run"] for key in self.paths]

    def answers(self, key: str) -> dict:
        """{("evaluate", subject, split, index): Answer} of the published run ``key``."""
        signature = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in self.files)
        return _published_answers(self.paths[key], signature, self.data.root if self.data is not None else None)

    def paired(self, production: str, candidate: str) -> dict:
        return pair_answers(("evaluate", self.answers(production)), ("evaluate", self.answers(candidate)))


@lru_cache(maxsize=4)
def _published_answers(path: Path, signature: tuple, root: Path | None) -> dict:
    data = MMLUData(root) if root is not None else None
    found = {}
    for row in iter_rows(path):
        question = None
        if data is not None:
            try:
                question = data.question(row["subject"], row["split"], row["index"])
            except (DataMissing, KeyError, IndexError):
                question = None
        answer = answer_of_row(row, question.question if question else None, question.choices if question else None)
        found[("evaluate", row["subject"], row["split"], row["index"])] = answer
    return found
