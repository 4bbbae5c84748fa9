"""The live model's published test runs of a benchmark, as the widgets read them (the release gate,
every document's, among them).

A benchmark's server side (MMLU's: benchmarks/mmlu/server/published_runs.py) summarises the
published files once into three context values, each carried only by the widgets that draw it:

- ``live_scores``: {"model", "runs": [{"key", "shots", "method", "questions", "correct", "subjects":
  {subject: [right, questions]}, "groups": {group key: [right, questions]}}]};
- ``live_calibration``: {"model", "runs": [{"key", "shots", "method", "questions", "correct",
  "average_confidence", "gap", "table": {binning: [{"groups", "rms"} for 1..MAX_BINS groups]}}]};
- ``live_pairs``: {"model", "order": [[subject, questions], ...], "runs": [{"key", "shots", "method",
  "questions", "correct", "marks"}]}, where ``marks`` holds one "1" (right) or "0" (wrong) per
  question, in ``order``.

Scores and calibration come from the letter runs only (a generative row has no probabilities); the
pairs hold every run, so the release gate can set the generative runs beside the letter ones. A run's
``key`` is "0-shot" for letter scoring and "0-shot generative" for the generative method.

Context comes back from the browser, so each value is checked here with messages naming the key.
Standard library only: this module runs in Pyodide too.
"""
from __future__ import annotations

from explainers import checks

MAX_BINS = 10  # the calibration widget's largest number of confidence groups
# The default model's size, counted from its packaged weights (the tied input and output embeddings
# once); tests/model/test_published_runs.py counts them again. The model card rounds it to "135M".
PARAMETERS = 134_515_008
LETTER, GENERATIVE = "letter", "generative"  # the methods of the published runs


def run_key(shots: int, method: str = LETTER) -> str:
    """A published run's name: "5-shot" (letter scoring), "5-shot generative"."""
    return f"{shots}-shot" if method == LETTER else f"{shots}-shot {method}"


def model_name(model: str) -> str:
    """The model as a sentence names it: "SmolLM2-135M-Instruct (Q4_1 GGUF …)" → "SmolLM2-135M-Instruct"."""
    return model.split(" (", 1)[0]


def _tally(name: str, value: object) -> list[int]:
    pair = checks.sequence(name, value, minimum=2)
    if len(pair) != 2:
        raise ValueError(f"{name} must be [right, questions]")
    right, total = checks.whole(f"{name}[0]", pair[0], minimum=0), checks.whole(f"{name}[1]", pair[1])
    if right > total:
        raise ValueError(f"{name}: more right answers ({right}) than questions ({total})")
    return [right, total]


def _runs(name: str, value: object) -> tuple[dict, list[dict]]:
    found = checks.mapping(name, value)
    checks.text(f"{name}.model", found.get("model"))
    runs = checks.sequence(f"{name}.runs", found.get("runs"))
    for i, run in enumerate(runs):
        where = f"{name}.runs[{i}]"
        checks.mapping(where, run)
        checks.text(f"{where}.key", run.get("key"))
        checks.whole(f"{where}.shots", run.get("shots"), minimum=0)
        if run.get("method", LETTER) not in (LETTER, GENERATIVE):
            raise ValueError(f"{where}.method must be {LETTER!r} or {GENERATIVE!r}")
        total = checks.whole(f"{where}.questions", run.get("questions"))
        if checks.whole(f"{where}.correct", run.get("correct"), minimum=0) > total:
            raise ValueError(f"{where}.correct is more than its questions")
    return found, runs


def live_scores(name: str, value: object) -> dict:
    """Checks ``live_scores`` (see the module's docstring)."""
    found, runs = _runs(name, value)
    for i, run in enumerate(runs):
        for part, least in (("subjects", 1), ("groups", 0)):  # groups need subjects.csv, which may be absent
            for key, tally in checks.mapping(f"{name}.runs[{i}].{part}", run.get(part), minimum=least).items():
                _tally(f"{name}.runs[{i}].{part}[{key!r}]", tally)
    return found


def live_calibration(name: str, value: object) -> dict:
    """Checks ``live_calibration`` (see the module's docstring)."""
    found, runs = _runs(name, value)
    for i, run in enumerate(runs):
        where = f"{name}.runs[{i}]"
        checks.probability(f"{where}.average_confidence", run.get("average_confidence"))
        checks.number(f"{where}.gap", run.get("gap"))
        table = checks.mapping(f"{where}.table", run.get("table"))
        for binning, rows in table.items():
            if len(checks.sequence(f"{where}.table[{binning!r}]", rows)) != MAX_BINS:
                raise ValueError(f"{where}.table[{binning!r}] must have one entry for each of 1 to {MAX_BINS} groups")
    return found


def live_pairs(name: str, value: object) -> dict:
    """Checks ``live_pairs`` (see the module's docstring): every run's marks follow ``order``."""
    found, runs = _runs(name, value)
    order = checks.sequence(f"{name}.order", found.get("order"))
    total = 0
    for i, entry in enumerate(order):
        pair = checks.sequence(f"{name}.order[{i}]", entry, minimum=2)
        checks.text(f"{name}.order[{i}][0]", pair[0])
        total += checks.whole(f"{name}.order[{i}][1]", pair[1])
    for i, run in enumerate(runs):
        marks = checks.text(f"{name}.runs[{i}].marks", run.get("marks"))
        if len(marks) != total or set(marks) - {"0", "1"}:
            raise ValueError(f"{name}.runs[{i}].marks must be {total:,} characters, each 0 or 1")
    return found


def run_choices(value: dict | None, describe: str = "our model, {shots}-shot, all {questions:,}") -> tuple:
    """(key, label) for each published run, for a choice setting; empty when none is published."""
    if not value:
        return ()
    model = model_name(value["model"])
    return tuple((run["key"], describe.format(model=model, **run)) for run in value["runs"])


def run_of(value: dict, key: str) -> dict:
    """The published run called ``key`` ("0-shot", "5-shot")."""
    return next(run for run in value["runs"] if run["key"] == key)


def run_pair(value: dict | None, method: str = LETTER) -> tuple[str, str] | None:
    """The keys of the published pair a release gate compares, (production, candidate): the
    ``method``'s run with the fewest shots against its run with the most; None below two such runs."""
    runs = sorted((run for run in (value or {}).get("runs", []) if run.get("method", LETTER) == method),
                  key=lambda run: run["shots"])
    return (runs[0]["key"], runs[-1]["key"]) if len(runs) >= 2 else None


def paired_marks(value: dict, baseline: str, candidate: str) -> dict:
    """Two published runs question by question, as the release gate takes loaded results:
    {"subjects": [...], "baseline": [0/1...], "candidate": [0/1...]}."""
    subjects = [name for name, size in value["order"] for _ in range(size)]
    return {
        "subjects": subjects,
        "baseline": [int(c) for c in run_of(value, baseline)["marks"]],
        "candidate": [int(c) for c in run_of(value, candidate)["marks"]],
    }
