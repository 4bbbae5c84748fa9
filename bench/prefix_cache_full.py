"""A new subject's 5-shot questions once the model server's prefix cache is full.

    python3 bench/prefix_cache_full.py                    # this checkout
    python3 bench/prefix_cache_full.py --before c1eecdf   # and the code at a git ref, one after the other

A model server (``python -m livescoring serve``) with a small prefix cache (``--prefix-cache-mib``,
160 by default: room for one of the two subjects' worked examples, not both) reads ``--questions`` 5-shot questions of
high_school_european_history (a 2,482-token header and worked examples), then as many of
high_school_us_history (1,943), each as the site and ``evaluate --server`` ask: the distribution after
the prompt. Prints each question's seconds. Until the fix, a block put into a full cache was the first
to go, so the second subject's worked examples were read again for each of its questions.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO_ROOT, exported, hardware, running_model_server  # noqa: E402

SUBJECTS = ("high_school_european_history", "high_school_us_history")


def seconds_per_question(url: str, count: int) -> dict[str, list[float]]:
    from benchmarks.mmlu import prompt
    from benchmarks.mmlu.server import data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from benchmarks.server.multiple_choice import answer_question
    from engine.config import default_config
    from livescoring.client import ModelClient
    from livescoring.remote import RemoteModel

    remote, data = RemoteModel(ModelClient(url)), MMLUData(data_dir(default_config()))
    spent: dict[str, list[float]] = {}
    for subject in SUBJECTS:
        worked = data.questions(subject, "dev")[:5]
        for q in data.questions(subject, "test")[:count]:
            started = time.perf_counter()
            answer_question(remote, prompt_format=prompt, subject=subject, question=q.question, choices=q.choices,
                            shots=worked, key=q.answer)
            spent.setdefault(subject, []).append(time.perf_counter() - started)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", metavar="REF", help="also run the model server of this git ref")
    parser.add_argument("--questions", type=int, default=4, help="per subject (default 4)")
    parser.add_argument("--prefix-cache-mib", type=int, default=160)
    args = parser.parse_args()
    print(f"hardware: {hardware()}; prefix cache {args.prefix_cache_mib} MiB", flush=True)
    with contextlib.ExitStack() as stack:
        variants = {"this checkout": REPO_ROOT}
        if args.before:
            variants[f"before ({args.before})"] = stack.enter_context(exported(args.before))
        for name, root in variants.items():
            with running_model_server(args=("--prefix-cache-mib", str(args.prefix_cache_mib)), timeout=300,
                                      root=root) as server:
                spent = seconds_per_question(server.url, args.questions)
            print(f"{name}: " + "; ".join(
                f"{subject} " + ", ".join(f"{s:.2f}" for s in times) + f" s (after the first, p50 "
                f"{statistics.median(times[1:]):.2f} s)" for subject, times in spent.items()), flush=True)

if __name__ == "__main__":
    main()
