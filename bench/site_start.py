"""How long the site takes to start: a fresh Python process builds the app and warms every document
(engine.warm_up, what app.py does before it listens), for a base commit (a temporary git worktree)
and for this working tree, in turns, so both see the same machine at the same time; each phase's
median and their ratio. Every server start pays this, and so does each test worker and each server
the tests start.

    python3 bench/site_start.py --base 310f384
    python3 bench/site_start.py --base HEAD~3 --rounds 9
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import hardware  # noqa: E402
from benchmarks.mmlu.server import data_dir  # noqa: E402
from benchmarks.mmlu_pro.server import data_dir as pro_data_dir  # noqa: E402

# Run in the tree being measured: the phases app.py goes through before it listens.
START = """
import json, time
started = time.perf_counter()
from engine import create_app, warm_up
imported = time.perf_counter()
app = create_app({})
built = time.perf_counter()
pages = warm_up(app)
warm = time.perf_counter()
assert all(line.endswith(" 200") for line in pages), pages
print(json.dumps({"import (s)": imported - started, "create_app (s)": built - imported,
                  "warm_up (s)": warm - built, "whole start (s)": warm - started}))
"""


def measure(tree: Path, env: dict) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", START], cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to compare with (any git revision)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per tree (default 5)")
    args = parser.parse_args()
    # The base's worktree is not beside ../shared: both read this tree's data folders.
    env = {**os.environ, "MMLU_DATA_DIR": str(data_dir()), "MMLU_PRO_DATA_DIR": str(pro_data_dir()), "PYTHONPATH": ""}
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.base], cwd=ROOT, check=True)
        try:
            trees = {f"base {args.base}": base, "this tree": ROOT}
            runs: dict[str, list[dict]] = {name: [] for name in trees}
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    runs[name].append(measure(tree, env))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=True)
    print(f"site start, {args.rounds} fresh processes per tree, medians, on {hardware()}")
    (base_name, base_runs), (name, now_runs) = runs.items()
    for phase in base_runs[0]:
        before = statistics.median(r[phase] for r in base_runs)
        after = statistics.median(r[phase] for r in now_runs)
        print(f"  {phase:16} {base_name}: {before:6.2f}   {name}: {after:6.2f}   ratio {after / before:.2f}")


if __name__ == "__main__":
    main()
