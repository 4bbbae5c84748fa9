"""lm-evaluation-harness's wall time through the model server against its own ``--model hf``, in one run.

    python3 bench/harness_client.py [--shots 5] [--questions 10] [--rounds 2]

Both sides are lm_eval 0.4.13 itself (tools/harness_reference.py, in HARNESS_VENV, the environment
tests/run.sh makes) on the same MMLU questions (the first ``--questions`` test questions of
abstract_algebra and astronomy, letter, option and generative tasks, plain prompts): once with
``--model hf`` on the converted float32 model (the whole prompt read for every option, as the
harness runs a Hugging Face model), once with ``--model local-completions`` against a model server
started fresh for the round (`python -m livescoring serve`, its prefix cache empty). The rounds
alternate the two, so a machine shared with other work slows both alike. Prints each wall time, the
ratio, and whether the two sides agree question by question (acc, and the generated text).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO_ROOT, hardware  # noqa: E402

from tools.launcher import running_model_server  # noqa: E402


def harness(args: list[str], out: Path) -> float:
    venv = Path(os.environ.get("HARNESS_VENV", Path.home() / ".cache" / "annotated-papers" / "lm-eval-0.4.13"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT),
           "TOKENIZERS_PARALLELISM": "false"}
    started = time.perf_counter()
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "tools.harness_reference", "--out", str(out), *args],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"lm_eval failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def answers(path: Path) -> dict:
    """Per task and question, what the harness decided: ``acc`` for the scored tasks, the answer it
    read for the generative one (log-likelihoods themselves differ in the fifth decimal)."""
    samples = json.loads(path.read_text())["samples"]
    return {(method, s["subject"], s["index"]): s["filtered_resps"] if method == "generative" else s["acc"]
            for method, rows in samples.items() for s in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shots", type=int, default=5)
    parser.add_argument("--questions", type=int, default=10, help="per subject")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"hardware: {hardware()}; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    common = ["--shots", str(args.shots), "--sides", "plain", "--questions", str(args.questions)]
    times: dict[str, list[float]] = {"hf": [], "server": []}
    with tempfile.TemporaryDirectory(prefix="harness-client-") as folder:
        out = {side: Path(folder) / side for side in times}
        for round_number in range(1, args.rounds + 1):
            times["hf"].append(harness(common, out["hf"]))
            with running_model_server(timeout=600) as server:
                times["server"].append(harness([*common, "--model-server", server.url], out["server"]))
            print(f"round {round_number}: --model hf {times['hf'][-1]:.1f} s, through the model server "
                  f"{times['server'][-1]:.1f} s; load average {os.getloadavg()[0]:.1f}", flush=True)
        name = f"{args.shots}shot-plain.json"
        ours, theirs = answers(out["server"] / name), answers(out["hf"] / name)
    same = sum(ours[key] == theirs[key] for key in theirs)
    hf, server = statistics.median(times["hf"]), statistics.median(times["server"])
    print(f"{args.shots} shots, {args.questions} questions x 2 subjects x 3 tasks: --model hf {hf:.1f} s, "
          f"local-completions through the model server {server:.1f} s (median of {args.rounds}): {hf / server:.2f}x; "
          f"{same} of {len(theirs)} answers the same")


if __name__ == "__main__":
    main()
