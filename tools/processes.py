"""The processes running now, as Linux's /proc shows them: each one's parent and CPU time.

Standard library only; on a system without /proc the table is empty. Read by tools/reaped.py (which
processes it must wait for) and by the test timeline (tests/conftest.py: what a test's processes cost).
"""
from __future__ import annotations

import os
from pathlib import Path


def process_table() -> dict[int, tuple[int, float]]:
    """{pid: (its parent's pid, its CPU seconds: its own and those of the children it waited for)}."""
    ticks_per_second = os.sysconf("SC_CLK_TCK")
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # After the name (in parentheses, which may hold spaces): state, ppid, … utime stime cutime cstime.
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended while we looked
            continue
        table[int(stat.parent.name)] = (int(fields[1]), sum(map(int, fields[11:15])) / ticks_per_second)
    return table


def descendants(pid: int, table: dict[int, tuple[int, float]]) -> set[int]:
    """The processes under ``pid`` in ``table``: its children, theirs, and so on."""
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, (parent, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found
