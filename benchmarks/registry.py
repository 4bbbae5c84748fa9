"""The benchmarks, found rather than listed: every package under benchmarks/ with a ``task.py``
defining ``TASK`` (benchmarks/task.py). The shared layers look a benchmark up here by name or by a
run's group field, so none of them imports a particular benchmark. Sans I/O beyond importing
modules; runs in the browser too."""
from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import benchmarks

from .task import MultipleChoiceTask


@cache
def tasks() -> dict[str, MultipleChoiceTask]:
    """Every benchmark's task by name, in package order."""
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
        found[module.TASK.name] = module.TASK
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
