"""Checks for the context values widgets declare (see :class:`widgetkit.spec.Widget`).

Context comes back from the browser on every call, so it is checked like any other input, with
messages that name the key.
"""
from __future__ import annotations

from explainers import checks

MAX_QUESTIONS = 100_000  # the most questions a context may describe or a reader may load


def sizes(name: str, value: object) -> dict[str, int]:
    """A mapping of names to question counts (each at least 1), adding up to MAX_QUESTIONS at most."""
    found = checks.mapping(name, value)
    for key, size in found.items():
        checks.whole(f"{name}[{key!r}]", size)
    if sum(found.values()) > MAX_QUESTIONS:
        raise ValueError(f"{name} adds up to more than {MAX_QUESTIONS:,} questions")
    return found


def titled_sizes(name: str, value: object) -> dict[str, dict]:
    """A mapping of names to {"title": text, "test": count} (a dataset's subjects)."""
    found = checks.mapping(name, value, minimum=0)
    for key, info in found.items():
        info = checks.mapping(f"{name}[{key!r}]", info)
        checks.text(f"{name}[{key!r}]['title']", info.get("title"))
        checks.whole(f"{name}[{key!r}]['test']", info.get("test"))
    return found


def paired_results(name: str, value: object) -> dict:
    """Two runs' per-question results: {"subjects": [...], "baseline": [0/1...], "candidate": [0/1...]}."""
    results = checks.mapping(name, value)
    subjects = checks.labels(f"{name}.subjects", results.get("subjects"), minimum=2)
    if len(subjects) > MAX_QUESTIONS:
        raise ValueError(f"{name} may hold at most {MAX_QUESTIONS:,} questions")
    checks.same_length(
        subjects=subjects,
        baseline=checks.scores(f"{name}.baseline", results.get("baseline"), minimum=2),
        candidate=checks.scores(f"{name}.candidate", results.get("candidate"), minimum=2),
    )
    return results


def server_object(name: str, value: object) -> object:
    """A value only the server holds (a dataset reader): widgets that take one are drawn by the server."""
    return value
