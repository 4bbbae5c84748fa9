"""Live-scoring speed: model load time, per-question latency (0- and 5-shot, p50/p95), batch throughput.

    python3 bench/scoring.py                       # CPU, SCORER_THREADS threads (default 1)
    python3 bench/scoring.py --device cuda         # the same figures on a GPU (bench/score_gpu.sh)

Load time is measured twice: "cold" converts the GGUF into an empty temporary cache (what a fresh
machine pays once), "warm" reads the converted weights back (every later start). Latency is the
Scorer's own time for one question (tokenising, one forward pass, softmax); throughput runs the
batch command's loop over real test questions. Figures are printed with the hardware they ran on.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import hardware  # noqa: E402
from engine.config import default_config  # noqa: E402
from livescoring.model import ModelSettings, load  # noqa: E402
from livescoring.scorer import Scorer  # noqa: E402
from papers.mmlu import prompt  # noqa: E402
from papers.mmlu.dataset import MMLUData  # noqa: E402
from papers.mmlu.server import data_dir  # noqa: E402
from papers.mmlu.server.evaluate import evaluate  # noqa: E402

SUBJECTS = ("astronomy", "world_religions", "high_school_geography")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(scorer: Scorer, data: MMLUData, shots: int, count: int) -> list[float]:
    times = []
    questions = [q for s in SUBJECTS for q in data.questions(s, "test")][:count]
    for q in questions:
        started = time.perf_counter()
        scorer.score(prompt, q.subject, q.question, q.choices, data.questions(q.subject, "dev")[:shots], "letter", q.answer)
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="auto, cpu or cuda (default: SCORER_DEVICE)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: SCORER_THREADS)")
    parser.add_argument("--questions", type=int, default=20, help="questions per latency figure")
    parser.add_argument("--batch", type=int, default=10, help="questions per subject in the throughput run")
    parser.add_argument("--skip-cold", action="store_true", help="do not measure the first (converting) load")
    args = parser.parse_args()

    config = default_config()
    if args.device:
        config["SCORER_DEVICE"] = args.device
    if args.threads:
        config["SCORER_THREADS"] = args.threads
    data = MMLUData(data_dir(config))
    print(f"hardware: {hardware()}")
    if not args.skip_cold:
        with tempfile.TemporaryDirectory() as empty:
            cold = load(ModelSettings.from_config({**config, "MODEL_CACHE_DIR": Path(empty)}))
            print(f"load, cold (convert GGUF, write cache): {cold.load_seconds:.1f} s")
            del cold
    load(ModelSettings.from_config(config))  # make sure the real cache exists
    loaded = load(ModelSettings.from_config(config))
    print(f"load, warm (from cache: {loaded.from_cache}): {loaded.load_seconds:.2f} s")
    print(f"model: {loaded.name} on {loaded.device}, {loaded.dtype}, {loaded.threads} torch thread(s)")
    if loaded.device == "cuda":
        import torch

        print(f"gpu: {torch.cuda.get_device_name(0)}")
    scorer = Scorer(loaded)
    latency(scorer, data, 0, 2)  # warm-up: first calls allocate
    for shots in (0, 5):
        times = latency(scorer, data, shots, args.questions)
        print(f"latency {shots}-shot over {len(times)} questions: p50 {percentile(times, .5):.0f} ms, "
              f"p95 {percentile(times, .95):.0f} ms, mean {statistics.fmean(times):.0f} ms")
    started = time.perf_counter()
    summary = evaluate(scorer, data, list(SUBJECTS), "test", shots=5, limit=args.batch, progress=False)
    elapsed = time.perf_counter() - started
    print(f"batch 5-shot: {summary['questions']} questions in {elapsed:.1f} s = "
          f"{summary['questions'] / elapsed:.2f} questions/s (accuracy {summary['micro']['accuracy']:.3f})")


if __name__ == "__main__":
    main()
