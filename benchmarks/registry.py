"""The benchmarks, found rather than listed: every package under benchmarks/ with a ``task.py``
defining ``TASK`` (benchmarks/task.py). The shared layers look a benchmark up here by name or by a
run's group field, so none of them imports a particular benchmark. Sans I/O beyond importing
modules; runs in the browser too (:func:`server`, a benchmark's web side, only on the server)."""
from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

import benchmarks

from .task import MultipleChoiceTask


@cache
def tasks() -> dict[str, MultipleChoiceTask]:
    """Every benchmark's task by name, in package order."""
    return {name: task for name, (task, _) in _found().items()}


@cache
def _found() -> dict[str, tuple[MultipleChoiceTask, str]]:
    """Every benchmark's task by name, with the package that defines it."""
    found = {}
    for package in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda p: p.name):
        if not package.ispkg:
            continue
        try:
            module = importlib.import_module(f"benchmarks.{package.name}.task")
        except ModuleNotFoundError as error:
            if error.name != f"benchmarks.{package.name}.task":
                raise
            continue
        found[module.TASK.name] = (module.TASK, f"benchmarks.{package.name}")
    return found


def task(name: str) -> MultipleChoiceTask:
    """The task called ``name``; a KeyError naming the benchmarks there are."""
    try:
        return tasks()[name]
    except KeyError:
        raise KeyError(f"no benchmark called {name!r}; there are {', '.join(tasks())}") from None


def group_fields() -> tuple[str, ...]:
    """The group fields run rows may carry, one per benchmark (``subject``, ``category``)."""
    return tuple(dict.fromkeys(t.group_field for t in tasks().values()))


def server(name: str) -> ModuleType:
    """The web side of the benchmark called ``name``, its ``server`` package: among what it defines,
    ``COMMANDS`` (its command lines, ``python -m benchmarks <name> <command>``) and
    ``gate_groups()`` (its groups of subjects, for the gate's knowledge shape). Server only: it is
    not in the browser's wheel."""
    task(name)  # the KeyError naming the benchmarks there are
    return importlib.import_module(f"{_found()[name][1]}.server")


@cache  # asked once per run row
def of_group_field(field: str) -> str | None:
    """The benchmark whose run rows carry the group field ``field``; None when none, or several, do."""
    names = [t.name for t in tasks().values() if t.group_field == field]
    return names[0] if len(names) == 1 else None


@cache
def harness_prefixes() -> tuple[tuple[str, str], ...]:
    """(lm-evaluation-harness task prefix, benchmark) for every benchmark, longest prefix first, so
    that ``mmlu_pro_law`` is read as MMLU-Pro's before ``mmlu_`` could claim it."""
    pairs = [(prefix, t.name) for t in tasks().values() for prefix in t.harness_task_prefixes]
    return tuple(sorted(pairs, key=lambda pair: -len(pair[0])))
