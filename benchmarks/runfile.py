"""The run-file schema every benchmark's ``evaluate`` writes, sans I/O (the browser reads runs too).

A run file is JSON Lines, one object per scored question, optionally gzip-compressed (``.gz``).
Only complete lines count: a line without its final newline is not a question. Every row has

* the question's identity: its **group** field (its benchmark's, ``MultipleChoiceTask.group_field``:
  ``subject`` for MMLU, ``category`` for MMLU-Pro; benchmarks/registry.py knows them all), ``split``
  and ``index`` (0-based within its group and split); a benchmark may add its own identity fields before them (MMLU-Pro's
  ``question_id``);
* the run's **settings**: ``method`` (``letter``, ``option`` or ``generative``), ``template``
  (``plain``: the prompt as text; ``chat``: built as lm-evaluation-harness's
  ``--apply_chat_template`` builds it, in the model's chat template) and ``split``; a benchmark may
  add fields about the question after them (MMLU-Pro's ``options``, the number of options);
* the **result**, :data:`RESULT_FIELDS`: ``shots`` (worked examples used: fewer than asked when the
  prompt did not fit), ``probabilities`` ({letter: probability}), ``prediction``, ``key``,
  ``correct`` (true/false), ``confidence`` (the prediction's probability), ``vocabulary_share``
  (the probability the K continuations hold among all next tokens) and ``model`` (its name).

A ``generative`` row (the harness's ``mmlu_generative``: greedy generation, its filter, exact
match) has no letter probabilities: ``probabilities``, ``confidence`` and ``vocabulary_share`` are
null, ``options`` gives the number of options, ``prediction`` is the letter the filtered response
matches (null if none), and after ``correct`` come :data:`GENERATIVE_FIELDS`: ``response`` (the
filtered response, the harness's ``filtered_resps``) and ``generated`` (the text generated, cut at
the stop sequence: its ``resps``).

A row of a **rotation check** (``evaluate --rotations K``: the question asked K times with its
options rotated cyclically, explainers/rotation.py) holds, among the benchmark's extra fields,
``rotations``: one object per rotation, in order of ``shift`` (0: the options as published), each
with ``position`` (the letter picked in the rotated question), ``answer`` (that option's original
letter: the same ``answer`` in every rotation means the same option text) and ``key_probability``
(the probability the model gave the key's text there). The result fields are the first rotation's,
so the file is also the plain run on its questions.

Field order in a written row: identity, ``method``, ``template``, the benchmark's extra fields, the
result.

Files written before the shared writer stay readable: MMLU's rows are already this schema; the
MMLU-Pro rows published in 2026-12 carry neither ``split``, ``method`` nor ``vocabulary_share``
(they are test-split, letter-method rows; the share was not recorded), which :func:`normalise`
supplies (``vocabulary_share`` as None). Rows written before ``template`` existed are plain-text
runs (:func:`template_of`); they are read as they are.
"""
from __future__ import annotations

import json

from .registry import group_fields

RESULT_FIELDS = ("shots", "probabilities", "prediction", "key", "correct", "confidence", "vocabulary_share", "model")
GENERATIVE_FIELDS = ("response", "generated")
TEMPLATES = ("plain", "chat")
LEGACY_DEFAULTS = {"split": "test", "method": "letter", "vocabulary_share": None}
LEGACY_TEMPLATE = "plain"  # rows written before ``template`` existed: read as such, not rewritten


class RunFileError(ValueError):
    """A line that is JSON but not a row of this schema, with the line named."""


def group_field(row: dict) -> str:
    """The name of the row's group field: one of the benchmarks' (``subject``, ``category``)."""
    for name in group_fields():
        if name in row:
            return name
    raise RunFileError(f"a run row needs one of {', '.join(group_fields())}")


def group_of(row: dict) -> str:
    return row[group_field(row)]


def question_key(row: dict) -> tuple[str, str, int]:
    """What names one question across runs of one benchmark: (group, split, index)."""
    return group_of(row), row.get("split", LEGACY_DEFAULTS["split"]), row["index"]


def settings_of(row: dict) -> tuple[str, ...]:
    """The settings a resumed run must share with the rows it keeps: (method, split), then the
    template when it is not plain text ("chat"), then "rotations K" for a rotation check."""
    settings = row.get("method", LEGACY_DEFAULTS["method"]), row.get("split", LEGACY_DEFAULTS["split"])
    if template_of(row) != "plain":
        settings = (*settings, template_of(row))
    return (*settings, rotations_setting(len(row["rotations"]))) if "rotations" in row else settings


def rotations_setting(rotations: int) -> str:
    """A rotation check's entry in its rows' settings."""
    return f"rotations {rotations}"


def template_of(row: dict) -> str:
    """How the row's prompt was built: ``plain`` or ``chat`` (rows without the field are plain)."""
    return row.get("template", LEGACY_TEMPLATE)


def normalise(row: dict) -> dict:
    """The row with every schema field present (defaults for rows written before the shared writer)."""
    group_field(row)
    missing = {k: v for k, v in LEGACY_DEFAULTS.items() if k not in row}
    return {**row, **missing} if missing else row


def make_row(identity: dict, method: str, extra: dict, key: str, result: dict, template: str = "plain") -> dict:
    """One row in the schema's field order, from the scorer's ``result`` (livescoring.scorer) and the
    benchmark's fields: ``identity`` (ending in group, split, index), ``extra`` and the answer ``key``.

    A generative ``result`` carries the benchmark's reading of its text: ``prediction``,
    ``correct``, ``response`` (the filtered response) and ``generated``."""
    row = {**identity, "method": method, "template": template, **extra, "shots": result["shots_used"],
           "probabilities": result.get("probabilities"), "prediction": result["prediction"], "key": key,
           "correct": result["correct"]}
    if method == "generative":
        row.update({name: result[name] for name in GENERATIVE_FIELDS})
    return {**row, "confidence": result.get("confidence"), "vocabulary_share": result.get("vocabulary_share"),
            "model": result["model"]["name"]}


def dumps(row: dict) -> str:
    """A row as its line (with the newline)."""
    return json.dumps(row) + "\n"


def complete_lines(text: str) -> list[str]:
    """The complete, non-blank lines of a run file's text (a torn last line is dropped)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1] if line.strip()]


def parse_rows(text: str) -> list[dict]:
    """The normalised rows of a run file's complete lines."""
    return [normalise(json.loads(line)) for line in complete_lines(text)]
