"""Where the test suite's time goes: read the file that `TEST_TIMELINE=<file> python3 -m pytest`
wrote (tests/conftest.py) and print each worker's busy span, the cores' use over the run, and the
tests that spend the most wall time and the most time waiting (wall minus CPU).

    TEST_TIMELINE=/tmp/timeline.tsv python3 -m pytest -q && python3 tools/test_timeline.py /tmp/timeline.tsv

The CPU figure counts the worker and every process under it (node, Chromium, the live server), so a
test's "waiting" (wall minus CPU) is time in which its worker left a core idle.
"""
from __future__ import annotations

import sys
from collections import defaultdict


def read(path: str) -> list[tuple[str, float, float, float, str]]:
    rows = []
    with open(path, encoding="utf-8") as timeline:
        for line in timeline:
            worker, start, wall, cpu, test = line.rstrip("\n").split("\t", 4)
            rows.append((worker, float(start), float(wall), float(cpu), test))
    return rows


def main(path: str, top: int = 25) -> None:
    rows = read(path)
    first = min(r[1] for r in rows)
    last = max(r[1] + r[2] for r in rows)
    print(f"{len(rows)} tests over {last - first:.0f} s")
    by_worker = defaultdict(list)
    for row in rows:
        by_worker[row[0]].append(row)
    for worker, mine in sorted(by_worker.items()):
        wall, cpu = sum(r[2] for r in mine), sum(r[3] for r in mine)
        end = max(r[1] + r[2] for r in mine) - first
        print(f"  {worker}: {len(mine)} tests, {wall:.0f} s in tests, {cpu:.0f} CPU-s, done at {end:.0f} s")
    print(f"\nLongest {top} (wall s, CPU s, waiting s):")
    for worker, _start, wall, cpu, test in sorted(rows, key=lambda r: -r[2])[:top]:
        print(f"  {wall:7.1f} {cpu:7.1f} {max(wall - cpu, 0):7.1f}  {worker}  {test}")
    print(f"\nMost waiting {top} (waiting s, wall s):")
    for worker, _start, wall, cpu, test in sorted(rows, key=lambda r: r[3] - r[2])[:top]:
        print(f"  {max(wall - cpu, 0):7.1f} {wall:7.1f}  {worker}  {test}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
