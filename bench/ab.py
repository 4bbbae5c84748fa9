"""Two commits' scoring speed measured in one run: bench/scoring.py's live-latency and batch
figures for a base commit (a temporary git worktree) and for this working tree, taken in turns,
so both see the same machine at the same time; each figure's median and their ratio.

    python3 bench/ab.py --base 3c44b2b            # before the benchmark layer, against now
    python3 bench/ab.py --base HEAD~3 --rounds 3 --questions 30
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import hardware  # noqa: E402
from benchmarks.mmlu.server import data_dir  # noqa: E402

# (figure, pattern on bench/scoring.py's output, whether higher is better)
FIGURES = (
    ("live 0-shot p50 (ms)", re.compile(r"live latency 0-shot.*?p50 (\d+) ms"), False),
    ("live 5-shot p50 (ms)", re.compile(r"live latency 5-shot.*?p50 (\d+) ms"), False),
    ("reference path (questions/s)", re.compile(r"reference path\): ([\d.]+) questions/s"), True),
    ("batches of 8 (questions/s)", re.compile(r"batches of 8: ([\d.]+) questions/s"), True),
)


def measure(tree: Path, questions: int, threads: int) -> dict[str, float]:
    """One run of the tree's own bench/scoring.py (no cold load, no service or full-test figure)."""
    command = [sys.executable, "bench/scoring.py", "--skip-cold", "--seconds", "0", "--sample-every", "0",
               "--questions", str(questions), "--batch", "8", "--batch-sizes", "8", "--threads", str(threads)]
    # The base's worktree is not beside ../shared: both read this tree's data folder.
    env = {**os.environ, "MMLU_DATA_DIR": str(data_dir())}
    out = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True).stdout
    found = {}
    for name, pattern, _ in FIGURES:
        match = pattern.search(out)
        if match:
            found[name] = float(match.group(1))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to compare against (a revision git knows)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each tree, taken in turns")
    parser.add_argument("--questions", type=int, default=20, help="questions per latency figure")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both")
    args = parser.parse_args()
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    print(f"hardware: {hardware()}")
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            runs: dict[str, list[dict]] = {"base": [], "now": []}
            for _ in range(args.rounds):
                runs["base"].append(measure(tree, args.questions, args.threads))
                runs["now"].append(measure(ROOT, args.questions, args.threads))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    print(f"base {base} against the working tree, {args.rounds} run(s) each in turns, {args.threads} thread(s):")
    for name, _, higher in FIGURES:
        before = [r[name] for r in runs["base"] if name in r]
        after = [r[name] for r in runs["now"] if name in r]
        if not before or not after:
            print(f"  {name}: not printed by one of the trees")
            continue
        b, a = statistics.median(before), statistics.median(after)
        speed = a / b if higher else b / a
        print(f"  {name}: base {b:g}, now {a:g}; now is {speed:.2f}x the base's speed")


if __name__ == "__main__":
    main()
