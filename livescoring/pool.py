"""Many jobs on several cores at once: one thread per scorer, all sharing one model.

A batch run on a CPU is fastest with one question per forward pass and one thread per core, each
running its own question (bench/scoring.py measures it): torch's matrix products on a ~100-token
question are too small to split well across cores, while two questions side by side keep both
cores busy. The threads share the model's weights (inference only reads them) and each has its
own tokenizer (a fast tokenizer is not safe to call from two threads) and its own prefix cache.
torch releases the GIL inside its operations, so the threads run in parallel.
"""
from __future__ import annotations

import copy
import dataclasses
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed


def twin(scorer):
    """Another scorer on the same model weights and decoder, with its own tokenizer and prefix cache."""
    loaded = dataclasses.replace(scorer.loaded, tokenizer=copy.deepcopy(scorer.loaded.tokenizer))
    return type(scorer)(loaded, reuse_prefix=scorer.reuse_prefix, batch_rows=scorer.batch_rows,
                        prefix_cache_bytes=scorer.prefixes.max_bytes, decoder=scorer.decoder,
                        pass_tokens=scorer.pass_tokens)


def score_jobs(scorers: Sequence, jobs: Sequence, work: Callable[[object, object, Callable[[], bool]], list],
               on_scored: Callable[[object, list], None]) -> None:
    """Run ``work(scorer, job, stop)`` for each job (say, questions whose prompts share a prefix) on
    whichever scorer is free; ``work`` asks the scorer (loglikelihood, generate_until, token_count)
    and passes ``stop`` on.

    ``on_scored(job, results)`` runs in the calling thread as each job finishes (with one scorer,
    in the jobs' order). If it or a job raises, or the caller is interrupted (Ctrl-C), the jobs not
    started are dropped, the running ones stop between forward passes, and the error is raised."""
    free: queue.SimpleQueue = queue.SimpleQueue()
    for scorer in scorers:
        free.put(scorer)
    stopping = threading.Event()

    def run(job) -> list:
        scorer = free.get()
        try:
            return work(scorer, job, stopping.is_set)
        finally:
            free.put(scorer)

    pool = ThreadPoolExecutor(max_workers=len(scorers), thread_name_prefix="scorer")
    try:
        futures = {pool.submit(run, job): job for job in jobs}
        for future in as_completed(futures):
            on_scored(futures[future], future.result())
    finally:
        stopping.set()
        pool.shutdown(wait=True, cancel_futures=True)
