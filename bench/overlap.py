"""The overlap page's check (``/scoring-lesson/overlap``), before and after the test set's n-gram index.

    python3 bench/overlap.py             # 12 pasted texts, each checked once both ways
    python3 bench/overlap.py --texts 30

Before issue 26 every post re-tokenised all 14,042 test questions (the reference below, as the
page did it); now the test set's n-grams are hashed into one sorted array once per data directory
(benchmarks/mmlu/server/data_checks.py) and a post looks up only its own. Prints the index's
build time and size, each way's CPU time per post (p50 and max), the ratio, and checks that both
ways list the same questions. Reads the MMLU files from MMLU_DATA_DIR (as the server does).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import hardware  # noqa: E402

from benchmarks.mmlu.server import data_checks  # noqa: E402
from benchmarks.mmlu.server import data_dir as mmlu_data_dir  # noqa: E402
from explainers import ngram_overlap  # noqa: E402


def before(root: Path, text: str, n: int = data_checks.OVERLAP_N, top: int = 5) -> list[dict]:
    """The check as the page made it before the index: every test question tokenised on every post."""
    pasted = data_checks._grams(text, n)
    found = []
    for subject, _split, index, question in data_checks._test_questions(root):
        if pasted.isdisjoint(data_checks._grams(question, n)):
            continue
        found.append({"subject": subject, "index": index, "overlap": ngram_overlap(question, text, n)})
    return sorted(found, key=lambda row: (-row["overlap"], row["subject"], row["index"]))[:top]


def pasted_texts(questions, count: int) -> list[str]:
    """What readers paste: a few test questions inside other text, a long common phrase, plain prose."""
    rng = random.Random(26)
    texts = []
    for number in range(count):
        kind = number % 3
        if kind == 0:
            picked = [rng.choice(questions)[3] for _ in range(rng.randint(1, 10))]
            texts.append(("Here is what I found: " + " ".join(picked))[:data_checks.MAX_PASTED])
        elif kind == 1:
            texts.append(("Which of the following is the most likely explanation of the result? " * 300)
                         [:data_checks.MAX_PASTED])
        else:
            words = [w for q in rng.sample(questions, 40) for w in q[3].split()]
            rng.shuffle(words)
            texts.append(" ".join(words)[:data_checks.MAX_PASTED])
    return texts


def cpu_seconds(fn, *args) -> tuple[float, object]:
    started = time.process_time()
    result = fn(*args)
    return time.process_time() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=12)
    args = parser.parse_args()
    root = mmlu_data_dir()
    questions = data_checks._test_questions(root)
    print(f"{hardware()}; {len(questions):,} test questions from {root}")
    build, index = cpu_seconds(data_checks.overlap_index, root)
    print(f"index: built once in {build:.2f} CPU-s, {len(index.hashes):,} n-grams, "
          f"{(index.hashes.nbytes + index.owners.nbytes) / 2**20:.1f} MiB")
    old, new = [], []
    for text in pasted_texts(questions, args.texts):
        spent_old, found_old = cpu_seconds(before, root, text)
        spent_new, found_new = cpu_seconds(data_checks.overlap_with_test, root, text)
        assert found_old == found_new, (found_old, found_new)
        old.append(spent_old)
        new.append(spent_new)
    p50_old, p50_new = statistics.median(old), statistics.median(new)
    print(f"before: p50 {p50_old * 1000:.0f} ms, max {max(old) * 1000:.0f} ms CPU a post")
    print(f"after:  p50 {p50_new * 1000:.1f} ms, max {max(new) * 1000:.1f} ms CPU a post (same rows listed)")
    print(f"ratio: {p50_old / p50_new:.0f}x less CPU a post at the median, {sum(old) / sum(new):.0f}x in total")


if __name__ == "__main__":
    main()
