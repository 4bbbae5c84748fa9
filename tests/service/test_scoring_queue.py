"""The scoring service's queue and the batch command's files, without the model.

The queue's rules (micro-batches, one client's share, callers that give up) and the batch file's
rules (only complete lines count, --resume, no silent overwrite, errors before any work) do not
depend on what the model says, so a scorer that answers from a counter stands in for it here; the
model's numbers are checked in tests/model/test_fast_scoring.py.
"""
from __future__ import annotations

import json
import math
import os
import threading
import time
from types import SimpleNamespace

import pytest

from benchmarks.mmlu.server.evaluate import MMLUTask
from benchmarks.server import evaluate as shared
from benchmarks.server.failures import service_failure
from benchmarks.server.runfile import read_lines, read_rows
from benchmarks.server.summary import summarise
from engine.__main__ import main as cli_main
from livescoring import worker
from livescoring.model import ModelSettings
from livescoring.pool import score_jobs
from livescoring.scorer import LoglikelihoodAnswer, PrefixCache, ScoringCancelled, _Prefix, common_prefix_length
from livescoring.worker import READY, QueueFull, ScoringService, ScoringTimeout


class CountingScorer:
    """Answers each request with its own ``n``; ``gate`` holds every batch until it is set; each
    batch takes ``passes`` steps, asking ``stop`` between them like the real scorer does."""

    def __init__(self, passes: int = 1):
        self.gate = threading.Event()
        self.batches: list[list[int]] = []
        self.passes_run = 0
        self.passes = passes

    def loglikelihood(self, requests, stop=None):
        self.batches.append(list(requests))
        for _ in range(self.passes):
            self.gate.wait(10)
            if stop is not None and stop():
                raise ScoringCancelled("every caller of this batch gave up waiting")
            self.passes_run += 1
            time.sleep(0.01)
        return [{"n": n} for n in requests]


def serving(scorer, settings: ModelSettings | None = None, **options) -> ScoringService:
    service = ScoringService(settings or ModelSettings(), **options)
    service.scorer, service.state = scorer, READY
    threading.Thread(target=service._serve, daemon=True).start()
    return service


def ask(service, n, client=None):
    """Question ``n`` as one request in the service's queue (the counting scorer answers {"n": n})."""
    (answer,) = service.loglikelihood([n], client=client)
    return answer


def submit(service, results, n, client=None):
    def call():
        try:
            results[n] = ask(service, n, client=client)
        except Exception as error:  # noqa: BLE001 - the test looks at what each caller got
            results[n] = error
    thread = threading.Thread(target=call)
    thread.start()
    return thread


def wait_until(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_questions_waiting_while_the_model_is_busy_are_scored_together():
    scorer = CountingScorer()
    service = serving(scorer, queue_size=8, micro_batch=4)
    results: dict = {}
    first = submit(service, results, 0)
    wait_until(lambda: scorer.batches)  # the worker is busy with question 0
    others = []
    for n in range(1, 7):  # one at a time, so that arrival order is this order
        others.append(submit(service, results, n))
        wait_until(lambda n=n: len(service.waiting) == n)
    scorer.gate.set()
    for thread in [first, *others]:
        thread.join()
    assert scorer.batches == [[0], [1, 2, 3, 4], [5, 6]]  # bounded by micro_batch, in arrival order
    assert results == {n: {"n": n} for n in range(7)}  # each caller gets its own answer


@pytest.mark.parametrize("server_url", ["", "http://127.0.0.1:9"])
def test_a_lone_question_waits_for_company_only_where_company_shares_passes(monkeypatch, server_url):
    """With the model in this process a batch's rows share forward passes, so the worker waits a moment
    (MICRO_BATCH_WAIT_S, long here) for questions arriving just after the first. The project's model
    server reads a request's prompts one after another, so with a model server the first question goes
    at once."""
    monkeypatch.setattr(worker, "MICRO_BATCH_WAIT_S", 30.0)
    scorer = CountingScorer()
    scorer.gate.set()
    service = serving(scorer, ModelSettings(server_url=server_url), queue_size=8, micro_batch=2)
    results: dict = {}
    first = submit(service, results, 0)
    if server_url:
        wait_until(lambda: scorer.batches)  # taken alone, with no 30 s wait for company
    else:
        wait_until(lambda: len(service.waiting) == 1)
        time.sleep(0.05)
        assert scorer.batches == [] and len(service.waiting) == 1  # still waiting for company
    second = submit(service, results, 1)
    first.join(10)
    second.join(10)
    assert scorer.batches == ([[0], [1]] if server_url else [[0, 1]])
    assert results == {0: {"n": 0}, 1: {"n": 1}}


def test_one_client_may_not_fill_the_queue():
    scorer = CountingScorer()
    service = serving(scorer, queue_size=8, per_client=2)
    results: dict = {}
    threads = [submit(service, results, 0, client="10.0.0.1"), submit(service, results, 1, client="10.0.0.1")]
    # Both questions are in: being scored (in one batch or two, as they happened to arrive) or waiting.
    wait_until(lambda: sum(map(len, scorer.batches)) + len(service.waiting) == 2)
    with pytest.raises(QueueFull) as refused:
        ask(service, 2, client="10.0.0.1")
    assert refused.value.retry_after >= 1 and "already have 2" in str(refused.value)
    threads.append(submit(service, results, 3, client="10.0.0.2"))  # another client still gets in
    # It is in once it waits or is scored: the worker may have taken it into the batch it was still
    # gathering (MICRO_BATCH_WAIT_S), together with 0 and 1, so the queue alone cannot tell.
    wait_until(lambda: 3 in results or len(service.waiting) >= 1 or any(3 in batch for batch in scorer.batches))
    scorer.gate.set()
    for thread in threads:
        thread.join()
    assert results == {0: {"n": 0}, 1: {"n": 1}, 3: {"n": 3}}
    assert ask(service, 4, client="10.0.0.1") == {"n": 4}  # its share is free again once answered


def test_a_client_past_its_share_of_model_time_scores_last_and_is_refused_while_another_waits(monkeypatch):
    """Issue 41, item 5: one address re-posting the three-scorers form (four scoring runs and two short
    generations, up to 20 CPU-s of the model a post within its budget) kept the model busy, since
    only generation time counted against a client's share. Now a scoring job's part of its batch
    counts too: a client past GENERATION_SHARE_S scores after the clients within theirs, and while
    another client's work is queued or running it is refused (429) with Retry-After saying when its
    time is back within its share. Alone, it is still served."""
    monkeypatch.setattr(worker, "GENERATION_SHARE_S", 0.05)
    scorer = CountingScorer(passes=8)  # 8 passes of 10 ms: a batch is over the share
    service = serving(scorer, queue_size=8, micro_batch=1, per_client=3, timeout_s=5.0)
    scorer.gate.set()
    assert ask(service, 0, client="hog") == {"n": 0}
    scorer.gate.clear()
    results: dict = {}
    threads = [submit(service, results, 1, client="hog")]  # nobody else waits: served
    wait_until(lambda: len(scorer.batches) == 2)
    threads.append(submit(service, results, 2, client="hog"))
    wait_until(lambda: len(service.waiting) == 1)
    threads.append(submit(service, results, 3, client="reader"))
    wait_until(lambda: len(service.waiting) == 2)
    with pytest.raises(QueueFull, match=r"held the model for 0 s in the last 5 minutes, more than one reader's share") \
            as refused:
        ask(service, 4, client="hog")
    answer = service_failure(refused.value)
    assert answer.status == 429 and answer.headers["Retry-After"] == str(refused.value.retry_after)
    assert worker.GENERATION_WINDOW_S - 10 <= refused.value.retry_after <= worker.GENERATION_WINDOW_S
    scorer.gate.set()
    for thread in threads:
        thread.join()
    assert scorer.batches == [[0], [1], [3], [2]]  # the reader's question before the hog's older one
    assert results == {n: {"n": n} for n in (1, 2, 3)}


def test_a_full_queue_refuses_with_retry_after():
    scorer = CountingScorer()
    service = serving(scorer, queue_size=2)
    results: dict = {}
    threads = [submit(service, results, 0)]
    wait_until(lambda: scorer.batches)
    threads += [submit(service, results, 1), submit(service, results, 2)]
    wait_until(lambda: len(service.waiting) == 2)
    with pytest.raises(QueueFull) as refused:
        ask(service, 3)
    assert refused.value.retry_after >= 1
    scorer.gate.set()
    for thread in threads:
        thread.join()


def test_a_caller_that_gives_up_takes_its_question_out_of_the_queue():
    scorer = CountingScorer()
    service = serving(scorer, queue_size=8, timeout_s=0.3)
    results: dict = {}
    busy = submit(service, results, 0)
    wait_until(lambda: scorer.batches)
    with pytest.raises(ScoringTimeout):
        ask(service, 1, client="impatient")
    assert len(service.waiting) == 0 and "impatient" not in service._per_client
    scorer.gate.set()
    busy.join()
    time.sleep(0.05)
    assert [n for batch in scorer.batches for n in batch] == [0]  # question 1 was never scored


def test_a_running_batch_whose_callers_all_gave_up_stops_between_forward_passes():
    scorer = CountingScorer(passes=50)
    scorer.gate.set()
    service = serving(scorer, timeout_s=0.1)
    with pytest.raises(ScoringTimeout):
        ask(service, 0)
    wait_until(lambda: not service._per_client)  # the worker has let go of the batch
    assert scorer.passes_run < 50
    scorer.passes = 1
    service.timeout_s = 10.0  # the next caller waits as long as a reader would
    assert ask(service, 1) == {"n": 1}  # the worker goes on with the next question


class HealthCounter:
    """A model server's client whose /health is counted, and held while ``hold`` is clear."""

    def __init__(self):
        self.asked, self.hold = 0, threading.Event()
        self.hold.set()

    def health(self) -> bool:
        self.asked += 1
        self.hold.wait(10)
        return True


def test_pages_ask_whether_the_model_server_answers_at_most_every_few_seconds_the_status_api_each_time(monkeypatch):
    """Every page with a live form shows whether the model server answers: asked afresh for each
    page, that was a /health request per page, which beside 16 page readers took the model server's
    interpreter from its passes. A hung server holds the one request asking, not every page or poll."""
    monkeypatch.setattr(worker, "HEALTH_FRESH_S", 60.0)  # longer than the test: no answer goes stale in it
    service = ScoringService(ModelSettings(server_url="http://127.0.0.1:9"))
    client = HealthCounter()
    loaded = SimpleNamespace(name="m", device="model server", dtype="float32", threads=2, load_seconds=0.0, from_cache=True)
    service.scorer, service.state = SimpleNamespace(client=client, loaded=loaded), READY
    assert [service.status()["state"] for _ in range(5)] == [READY] * 5
    assert client.asked == 1
    assert service.status(fresh=True)["state"] == READY and service.status(fresh=True)["state"] == READY
    assert client.asked == 3

    client.hold.clear()  # the server stops answering while the status API asks
    asking = threading.Thread(target=service.status, kwargs={"fresh": True})
    asking.start()
    wait_until(lambda: client.asked == 4)
    monkeypatch.setattr(worker, "HEALTH_FRESH_S", 0.0)  # a page's answer is stale, but another thread is asking
    started = time.monotonic()
    assert service.status()["state"] == READY and service.status(fresh=True)["state"] == READY
    assert time.monotonic() - started < 1 and client.asked == 4
    client.hold.set()
    asking.join(10)


def test_common_token_prefix_and_the_byte_bound_of_the_prefix_cache():
    assert common_prefix_length((1, 2, 3), [1, 2, 4, 5]) == 2
    assert common_prefix_length((1, 2), [1, 2, 3]) == 2
    assert common_prefix_length((), [1]) == 0
    cache = PrefixCache(max_bytes=100)
    for name in ("a", "b", "c"):
        cache.put(name, _Prefix((1,), [], 40))
    assert list(cache.entries) == ["b", "c"] and cache.nbytes == 80  # least recently used out first
    cache.get("b")
    cache.put("d", _Prefix((1,), [], 40))
    assert list(cache.entries) == ["b", "d"]
    cache.put("huge", _Prefix((1,), [], 101))
    assert "huge" not in cache.entries


# -- the batch command's file --------------------------------------------------------------------

class LetterScorer:
    """The narrow interface of a model that finds " A" twice as likely as any other continuation and
    counts one token per prompt; raises KeyboardInterrupt on loglikelihood call ``interrupt_at``."""

    context_length = 2048

    def __init__(self, interrupt_at: int | None = None):
        self.calls = 0
        self.interrupt_at = interrupt_at

    def token_count(self, context, continuations=()):
        return 1

    def model_facts(self):
        return {"name": "counting"}

    def loglikelihood(self, requests, stop=None):
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        return [LoglikelihoodAnswer(math.log(0.4 if r.continuation == " A" else 0.2), False, (), 1, ())
                for r in requests]


@pytest.fixture(scope="module")
def data(app):
    return app.extensions["mmlu_data"]


def evaluate(scorer, data, subjects, **options) -> dict:
    """MMLU's evaluate (the shared one on MMLU's task), summarised."""
    return summarise(shared.evaluate(MMLUTask(data), scorer, subjects, **options))


def read_complete_rows(path) -> tuple[list[dict], int]:
    """The rows of the file's complete lines, and the bytes those lines take."""
    return read_rows(path), sum(len(line.encode("utf-8")) for line in read_lines(path))


def test_an_interrupted_run_keeps_complete_lines_and_resumes_where_it_stopped(data, tmp_path):
    out = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(LetterScorer(interrupt_at=3), data, ["astronomy", "virology"], shots=1, limit=10, out=out,
                 progress=False, batch_size=4)
    rows, kept = read_complete_rows(out)
    assert len(rows) == 8 and kept == out.stat().st_size
    with open(out, "a", encoding="utf-8") as fh:
        fh.write('{"subject": "virology", "spl')  # as a kill in the middle of a write would leave it
    summary = evaluate(LetterScorer(), data, ["astronomy", "virology"], shots=1, limit=10, out=out,
                       progress=False, resume=True, batch_size=4)
    rows, kept = read_complete_rows(out)
    assert kept == out.stat().st_size  # the torn line is gone
    assert sorted((r["subject"], r["index"]) for r in rows) == sorted(
        (s, i) for s in ("astronomy", "virology") for i in range(10))
    assert summary["questions"] == 20


def test_resume_refuses_a_file_of_another_method(data, tmp_path):
    out = tmp_path / "run.jsonl"
    evaluate(LetterScorer(), data, ["astronomy"], shots=0, limit=2, out=out, progress=False)
    with pytest.raises(ValueError, match="another run"):
        evaluate(LetterScorer(), data, ["astronomy"], shots=0, limit=3, method="option", out=out,
                 progress=False, resume=True)


def test_the_command_refuses_bad_outputs_before_loading_the_model(tmp_path, capsys):
    existing = tmp_path / "done.jsonl"
    existing.write_text(json.dumps({"subject": "astronomy"}) + "\n")
    cases = [
        (["--out", str(existing)], "already exists; add --resume"),
        (["--out", str(tmp_path / "missing" / "x.jsonl")], "does not exist"),
        (["--out", str(tmp_path)], "is a directory"),
        (["--out", str(existing), "--resume", "--force"], "contradict"),
        (["--batch-size", "0", "--out", str(tmp_path / "new.jsonl")], "--batch-size"),
    ]
    for extra, message in cases:
        started = time.perf_counter()
        assert cli_main(["mmlu", "evaluate", "--subjects", "astronomy", *extra]) == 2
        assert message in capsys.readouterr().err
        assert time.perf_counter() - started < 5  # no model was loaded


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only file")
def test_the_command_refuses_a_read_only_output(tmp_path, capsys):
    existing = tmp_path / "done.jsonl"
    existing.write_text("")
    existing.chmod(0o444)
    assert cli_main(["mmlu", "evaluate", "--out", str(existing), "--resume"]) == 2
    assert "not writable" in capsys.readouterr().err


# -- scorers side by side (livescoring.pool) -------------------------------------------------------

def answer(scorer, job, stop):
    return scorer.answer(job, stop)


class SideBySideScorer:
    """Records which thread scored which job; waits at a barrier so two jobs must run at once."""

    def __init__(self, barrier: threading.Barrier | None = None, fail_on: int | None = None, seconds: float = 0):
        self.barrier, self.fail_on, self.seconds, self.threads = barrier, fail_on, seconds, []

    def answer(self, requests, stop=None):
        self.threads.append(threading.current_thread().name)
        time.sleep(self.seconds)
        if self.barrier is not None:
            self.barrier.wait(timeout=5)  # both scorers reach it only if they run at the same time
        if requests[0]["n"] == self.fail_on:
            raise ValueError(f"question {self.fail_on} is malformed")
        return [{"n": r["n"]} for r in requests]


def test_two_scorers_run_side_by_side_and_results_reach_the_calling_thread():
    barrier = threading.Barrier(2)
    scorers = [SideBySideScorer(barrier), SideBySideScorer(barrier)]
    seen = []
    score_jobs(scorers, [[{"n": n}] for n in range(6)], answer,
               lambda job, results: seen.append((threading.current_thread().name, job[0]["n"], results[0]["n"])))
    assert sorted(n for _, n, _ in seen) == list(range(6)) and all(n == got for _, n, got in seen)
    assert {name for name, _, _ in seen} == {threading.current_thread().name}
    assert len(scorers[0].threads) == len(scorers[1].threads) == 3  # the barrier paired every job


def test_one_scorer_keeps_the_jobs_order_and_an_error_stops_the_rest():
    scorer = SideBySideScorer(fail_on=2)
    seen = []
    with pytest.raises(ValueError, match="question 2 is malformed"):
        score_jobs([scorer], [[{"n": n}] for n in range(5)], answer, lambda job, results: seen.append(results[0]["n"]))
    assert seen == [0, 1]  # nothing after the error is delivered


def test_an_interrupt_in_the_caller_stops_the_jobs_not_started():
    scorer = SideBySideScorer(seconds=0.2)  # 50 jobs would take ten seconds

    def interrupt(job, results):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        score_jobs([scorer], [[{"n": n}] for n in range(50)], answer, interrupt)
    assert len(scorer.threads) <= 3
