"""One worker thread owns the model: it loads it once, then scores the waiting requests in micro-batches.

Requests wait in a bounded queue; when it is full, or when one client already has its share of
it, the caller is told to come back later (429 with Retry-After). The worker takes the oldest
job and, with it, the others already waiting (at most MICRO_BATCH, after at most
MICRO_BATCH_WAIT_S more), and scores them in one call to ``Scorer.score_many``: questions that
arrived while the model was busy share forward passes, and each answer equals the one it would
get alone. A caller that gives up (its timeout) takes its job out of the queue; a batch whose
callers have all given up stops between forward passes. Loading happens on the first request
(or at start-up with SCORER_LOAD_AT_START); meanwhile the page shows "warming up" from
:meth:`ScoringService.status`.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

from .model import ModelSettings, ModelUnavailable, check_available, load
from .scorer import Scorer, ScoringCancelled

log = logging.getLogger(__name__)

NOT_LOADED, LOADING, READY, FAILED = "not loaded", "loading", "ready", "failed"
MICRO_BATCH = 8  # questions scored together at most
MICRO_BATCH_WAIT_S = 0.005  # how long the worker waits for company once it has one job
PER_CLIENT = 2  # jobs one client may have queued or running at once


class QueueFull(RuntimeError):
    """Too many questions are waiting (or this client has its share); ``retry_after`` is a fair guess in seconds."""

    def __init__(self, retry_after: int, message: str = "Too many questions are waiting to be scored"):
        super().__init__(f"{message}; try again in about {retry_after} s.")
        self.retry_after = retry_after


class StillLoading(RuntimeError):
    """The model is still warming up after the request's time ran out."""


class ScoringTimeout(RuntimeError):
    """Scoring took longer than SCORER_TIMEOUT_S."""


@dataclass(eq=False)
class _Job:
    request: dict
    client: object
    future: Future = field(default_factory=Future)
    abandoned: threading.Event = field(default_factory=threading.Event)


class ScoringService:
    """The single owner of the model: state, queue and worker thread."""

    def __init__(self, settings: ModelSettings, queue_size: int = 8, timeout_s: float = 60.0,
                 micro_batch: int = MICRO_BATCH, per_client: int = PER_CLIENT):
        self.settings = settings
        self.timeout_s = timeout_s
        self.queue_size = max(1, queue_size)
        self.micro_batch = max(1, micro_batch)
        self.per_client = max(1, per_client)
        self.waiting: collections.deque[_Job] = collections.deque()
        self._changed = threading.Condition()
        self._per_client: collections.Counter = collections.Counter()  # queued or running, by client
        self.state = NOT_LOADED
        self.message = "The model loads on the first question."
        self.scorer: Scorer | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._recent_ms: list[float] = []  # per question, so a batch of n counts n times its share

    # -- state ---------------------------------------------------------------------------------
    def status(self) -> dict:
        """What the page shows: state, a sentence, and the model's facts once loaded."""
        info = {"state": self.state, "message": self.message, "queued": len(self.waiting)}
        if self.scorer is not None:
            loaded = self.scorer.loaded
            info["model"] = {"name": loaded.name, "device": loaded.device, "dtype": loaded.dtype,
                             "threads": loaded.threads, "load_seconds": round(loaded.load_seconds, 2),
                             "from_cache": loaded.from_cache}
        return info

    def start(self) -> None:
        """Begin loading in the worker thread (idempotent); a missing model fails at once."""
        with self._lock:
            if self.state != NOT_LOADED:
                return
            try:
                check_available(self.settings)
            except ModelUnavailable as error:
                self._fail(str(error))
                return
            self.state, self.message = LOADING, "Warming up: loading the model."
            threading.Thread(target=self._run, name="scoring-worker", daemon=True).start()

    def _fail(self, message: str) -> None:
        self.state, self.message = FAILED, message
        self._ready.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the model is ready or failed; True when ready."""
        self._ready.wait(timeout)
        return self.state == READY

    # -- the worker thread ----------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self.scorer = Scorer(load(self.settings), batch_rows=self.micro_batch)
        except Exception as error:  # noqa: BLE001 - any failure leaves the site up and says why
            log.exception("live scoring model failed to load")
            self._fail(str(error) if isinstance(error, ModelUnavailable) else f"The model failed to load: {error}")
            self._drain()
            return
        loaded = self.scorer.loaded
        self.state = READY
        self.message = f"Ready: {loaded.name} on {loaded.device} (loaded in {loaded.load_seconds:.1f} s)."
        self._ready.set()
        self._serve()

    def _serve(self) -> None:
        """Score micro-batches for ever (the worker thread's life once the model is loaded)."""
        while True:
            batch = self._next_batch()
            started = time.perf_counter()
            try:
                results = self.scorer.score_many([job.request for job in batch],
                                                 stop=lambda jobs=batch: all(job.abandoned.is_set() for job in jobs))
            except ScoringCancelled as error:
                for job in batch:
                    job.future.set_exception(ScoringTimeout(str(error)))
            except Exception:  # noqa: BLE001 - one bad question must not fail the others: score them alone
                for job in batch:
                    self._score_alone(job)
            else:
                for job, result in zip(batch, results, strict=True):
                    job.future.set_result(result)
            elapsed_ms = (time.perf_counter() - started) * 1000
            self._recent_ms = (self._recent_ms + [elapsed_ms / len(batch)] * len(batch))[-20:]
            self._finished(batch)

    def _score_alone(self, job: _Job) -> None:
        try:
            job.future.set_result(self.scorer.score(**job.request))
        except Exception as error:  # noqa: BLE001 - handed to the waiting request
            job.future.set_exception(error)

    def _next_batch(self) -> list[_Job]:
        """The oldest waiting job and those queued behind it (at most micro_batch), marked running.

        Jobs whose callers gave up were already taken out of the queue (see _abandon), under the
        same lock, so every job taken here is still wanted."""
        with self._changed:
            while not self.waiting:
                self._changed.wait()
            deadline = time.monotonic() + MICRO_BATCH_WAIT_S
            while len(self.waiting) < self.micro_batch and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)
            batch = [self.waiting.popleft() for _ in range(min(self.micro_batch, len(self.waiting)))]
            for job in batch:
                job.future.set_running_or_notify_cancel()
            return batch

    def _finished(self, batch: list[_Job]) -> None:
        with self._changed:
            for job in batch:
                self._release(job.client)

    def _release(self, client) -> None:
        self._per_client[client] -= 1
        if self._per_client[client] <= 0:
            del self._per_client[client]

    def _drain(self) -> None:
        """After a failed load, answer everyone still waiting with the reason."""
        with self._changed:
            jobs, self.waiting = list(self.waiting), collections.deque()
            self._per_client.clear()
        for job in jobs:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(ModelUnavailable(self.message))

    # -- requests -------------------------------------------------------------------------------
    def retry_after(self) -> int:
        """Seconds until the queue has probably moved: queued jobs times recent time per job."""
        per_job_s = (sum(self._recent_ms) / len(self._recent_ms) / 1000) if self._recent_ms else 2.0
        return max(1, round(per_job_s * (len(self.waiting) + 1)))

    def score(self, client=None, **kwargs) -> dict:
        """Queue one question (Scorer.score's arguments) and wait for its result.

        ``client`` (for example the caller's address) limits how many jobs one caller may have
        queued or running at once; None is one more anonymous caller with no limit of its own."""
        self.start()
        if self.state == FAILED:
            raise ModelUnavailable(self.message)
        job = _Job(kwargs, client if client is not None else object())
        with self._changed:
            if len(self.waiting) >= self.queue_size:
                raise QueueFull(self.retry_after())
            if client is not None and self._per_client[client] >= self.per_client:
                raise QueueFull(self.retry_after(), f"You already have {self.per_client} questions being scored")
            self.waiting.append(job)
            self._per_client[job.client] += 1
            self._changed.notify_all()
        try:
            return job.future.result(timeout=self.timeout_s)
        except FutureTimeout:
            self._abandon(job)
            if self.state == FAILED:
                raise ModelUnavailable(self.message) from None
            if self.state == LOADING:
                raise StillLoading(self.message) from None
            raise ScoringTimeout(f"Scoring took longer than {self.timeout_s:g} s and was abandoned.") from None

    def _abandon(self, job: _Job) -> None:
        """The caller gave up: out of the queue if it is still there, else flagged for the running batch."""
        job.abandoned.set()
        with self._changed:
            if job.future.cancel():  # still pending, so still in the queue (the worker takes jobs under this lock)
                self.waiting.remove(job)
                self._release(job.client)
