"""Live-scoring speed, every figure from one run on one machine, printed with the hardware named.

    python3 bench/scoring.py                       # CPU, SCORER_THREADS threads (default: every core)
    python3 bench/scoring.py --device cuda         # the same figures on a GPU (bench/score_gpu.sh)

Figures:

* load time: "cold" converts the GGUF into an empty temporary cache (what a fresh machine pays
  once), "warm" reads the converted weights back (every later start);
* live latency, warm (the subject's prefix already cached): the Scorer's own time for one
  question, 0- and 5-shot, p50/p95;
* batch throughput at 5 shots on the same questions: the reference path (each question alone,
  one forward pass over its whole prompt, logits everywhere, as lm-evaluation-harness runs it)
  against the batch command's path (prefix reused, batches of 1, 4, 8, 16), as ratios, all on the
  same torch threads;
* the full 5-shot test (14,042 questions) as the batch command runs it by default (one worker per
  core, one torch thread each, batches of eight questions of one subject and about one length),
  estimated from every ``--sample-every``-th of those very batches, across all subjects: the
  sample's time per character of questions and options, times the whole test's characters (long
  subjects such as professional law cost more per question), plus the 57 subjects' shared
  prompts, timed separately;
* the scoring service under 16 client threads for ``--seconds`` each: micro-batching against
  one question at a time (in-process, no HTTP: bench/load.py measures the HTTP server).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import hardware  # noqa: E402
from benchmarks.mmlu import prompt  # noqa: E402
from benchmarks.mmlu.server import data_dir  # noqa: E402
from benchmarks.mmlu.server.evaluate import MMLUTask  # noqa: E402
from benchmarks.mmlu.server.reader import MMLUData  # noqa: E402
from benchmarks.mmlu.task import TASK  # noqa: E402
from benchmarks.server.evaluate import DEFAULT_BATCH_SIZE, DEFAULT_WORKERS, batches, evaluate  # noqa: E402
from benchmarks.server.multiple_choice import answer_question, answer_questions, prepare, read  # noqa: E402
from benchmarks.server.summary import summarise  # noqa: E402
from engine.config import default_config  # noqa: E402
from livescoring.model import ModelSettings, load  # noqa: E402
from livescoring.pool import score_jobs, twin  # noqa: E402
from livescoring.scorer import Scorer  # noqa: E402
from livescoring.worker import READY, QueueFull, ScoringService  # noqa: E402

SUBJECTS = ("astronomy", "world_religions", "high_school_geography")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def requests_for(data: MMLUData, questions, shots: int) -> list[dict]:
    return [{"prompt_format": prompt, "subject": q.subject, "question": q.question, "choices": q.choices,
             "shots": data.questions(q.subject, "dev")[:shots], "method": "letter", "key": q.answer}
            for q in questions]


def full_test_estimate(loaded, data: MMLUData, every: int, workers: int, batch: int) -> str:
    """The full 5-shot test's time with ``workers`` scorers (one torch thread each when several)
    and batches of ``batch``, from every ``every``-th of the batch command's own batches."""
    import torch

    threads = torch.get_num_threads()
    if workers > 1:
        torch.set_num_threads(1)
    # Room for every subject's shared prompt: they are timed once, and the sample then runs on them.
    first = Scorer(loaded, batch_rows=batch, prefix_cache_bytes=16 * 2**30)
    scorers = [first] + [twin(first) for _ in range(workers - 1)]
    started = time.perf_counter()
    for subject in data.subjects:
        (request,) = requests_for(data, data.questions(subject, "test")[:1], 5)
        first._prefix(prepare(first, request).shared)
    prefixes = time.perf_counter() - started  # in a run each worker computes them too, side by side
    for scorer in scorers[1:]:
        scorer.prefixes.entries = OrderedDict(first.prefixes.entries)  # read-only tensors, shared
    whole_test = {s: data.questions(s, "test") for s in data.subjects}
    jobs = batches(MMLUTask(data), whole_test, 5, "letter", batch)[every // 2::every]  # the batch command's own batches

    started = time.perf_counter()
    score_jobs(scorers, jobs, answer_questions, lambda job, results: None)
    seconds = time.perf_counter() - started
    torch.set_num_threads(threads)
    question = {(q.subject, q.index): q for questions in whole_test.values() for q in questions}
    sampled = sum(TASK.characters(question[r["subject"], r["index"]]) for job in jobs for r in job)
    whole = sum(map(TASK.characters, question.values()))
    total = seconds * whole / sampled + prefixes
    return (f"full 5-shot test, {workers} worker(s), {torch.get_num_threads() if workers == 1 else 1} thread(s) "
            f"each, batches of {batch}: {sum(map(len, jobs))} sampled questions ({sampled:,} characters) in "
            f"{seconds:.0f} s, {sampled / seconds:.0f} characters/s; "
            f"the test's {whole:,} characters and the 57 shared prompts ({prefixes:.0f} s) "
            f"give about {total / 60:.0f} min")


def latency(scorer: Scorer, requests: list[dict]) -> list[float]:
    times = []
    for r in requests:
        started = time.perf_counter()
        answer_question(scorer, **r)
        times.append((time.perf_counter() - started) * 1000)
    return times


def service_throughput(loaded, requests: list[dict], micro_batch: int, clients: int, seconds: float) -> float:
    """Answered questions per second with ``clients`` threads each sending one question after another."""
    service = ScoringService(ModelSettings(), queue_size=clients, timeout_s=600, micro_batch=micro_batch,
                             per_client=1)
    service.scorer, service.state = Scorer(loaded, batch_rows=micro_batch), READY
    service._ready.set()
    for r in {r["subject"]: r for r in requests}.values():
        answer_question(service.scorer, **r)  # every subject's prefix cached, as on a warm server
    threading.Thread(target=service._serve, daemon=True).start()
    answered, stop_at = [0] * clients, time.perf_counter() + seconds

    def client(n: int) -> None:
        rng = random.Random(n)
        while time.perf_counter() < stop_at:
            try:
                prepared = prepare(service, rng.choice(requests))  # as benchmarks/server/live.py asks it
                read(prepared, service.loglikelihood(prepared.requests, client=n), service.model_facts())
                answered[n] += 1
            except QueueFull:
                time.sleep(0.05)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(answered) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="auto, cpu or cuda (default: SCORER_DEVICE)")
    parser.add_argument("--dtype", default=None, help="auto, float32, bfloat16 or float16 (default: SCORER_DTYPE)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: SCORER_THREADS)")
    parser.add_argument("--questions", type=int, default=20, help="questions per latency figure")
    parser.add_argument("--batch", type=int, default=16, help="questions per subject in the throughput runs")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--clients", type=int, default=16, help="client threads for the service figure")
    parser.add_argument("--seconds", type=float, default=30, help="seconds per service figure (0: skip it)")
    parser.add_argument("--sample-every", type=int, default=40,
                        help="every n-th of the batch command's batches for the full-test estimate (0: skip it)")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="workers for the full-test estimate")
    parser.add_argument("--skip-cold", action="store_true", help="do not measure the first (converting) load")
    args = parser.parse_args()

    config = default_config()
    if args.device:
        config["SCORER_DEVICE"] = args.device
    if args.dtype:
        config["SCORER_DTYPE"] = args.dtype
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

    live = Scorer(loaded)
    questions = [q for s in SUBJECTS for q in data.questions(s, "test")[1:]][:args.questions]
    for shots in (0, 5):
        latency(live, requests_for(data, [data.questions(s, "test")[0] for s in SUBJECTS], shots))  # warm
        times = latency(live, requests_for(data, questions, shots))
        print(f"live latency {shots}-shot, warm, over {len(times)} questions: p50 {percentile(times, .5):.0f} ms, "
              f"p95 {percentile(times, .95):.0f} ms, mean {statistics.fmean(times):.0f} ms")

    batch_questions = [q for s in SUBJECTS for q in data.questions(s, "test")[:args.batch]]
    reference = Scorer(loaded, reuse_prefix=False)
    started = time.perf_counter()
    for r in requests_for(data, batch_questions, 5):
        answer_question(reference, **r)
    base = len(batch_questions) / (time.perf_counter() - started)
    print(f"5-shot, full prompt, one question per pass (the reference path): {base:.2f} questions/s "
          f"over {len(batch_questions)} questions")
    for size in args.batch_sizes:
        started = time.perf_counter()  # from a cold prefix cache: the batch command pays for it too
        summary = summarise(evaluate(MMLUTask(data), Scorer(loaded, batch_rows=size), list(SUBJECTS), "test", shots=5,
                                     limit=args.batch, progress=False, batch_size=size))
        rate = summary["questions"] / (time.perf_counter() - started)
        print(f"5-shot, prefix reused, batches of {size}: {rate:.2f} questions/s = {rate / base:.1f}x the reference")
    if args.sample_every > 0:  # on a GPU: one worker, the largest batches
        cuda = loaded.device == "cuda"
        print(full_test_estimate(loaded, data, args.sample_every, 1 if cuda else args.workers,
                                 max(args.batch_sizes) if cuda else DEFAULT_BATCH_SIZE))

    if args.seconds > 0:
        pool = requests_for(data, [q for s in SUBJECTS for q in data.questions(s, "test")[:40]], 5)
        one = service_throughput(loaded, pool, 1, args.clients, args.seconds)
        micro = service_throughput(loaded, pool, 8, args.clients, args.seconds)
        print(f"service, {args.clients} clients, 5-shot, {args.seconds:g} s each: one at a time {one:.2f} questions/s, "
              f"micro-batches of up to 8 {micro:.2f} questions/s = {micro / one:.1f}x")


if __name__ == "__main__":
    main()
