"""One worker thread owns the model: it loads it once, then scores requests one at a time.

Requests wait in a bounded queue; when it is full the caller is told to come back later (429).
Loading happens on the first request (or at start-up with SCORER_LOAD_AT_START); meanwhile the
page shows "warming up" from :meth:`ScoringService.status`.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from .model import ModelSettings, ModelUnavailable, check_available, load
from .scorer import Scorer

log = logging.getLogger(__name__)

NOT_LOADED, LOADING, READY, FAILED = "not loaded", "loading", "ready", "failed"


class QueueFull(RuntimeError):
    """Too many questions are waiting; ``retry_after`` is a fair guess in seconds."""

    def __init__(self, retry_after: int):
        super().__init__(f"Too many questions are waiting to be scored; try again in about {retry_after} s.")
        self.retry_after = retry_after


class StillLoading(RuntimeError):
    """The model is still warming up after the request's time ran out."""


class ScoringTimeout(RuntimeError):
    """Scoring took longer than SCORER_TIMEOUT_S."""


class ScoringService:
    """The single owner of the model: state, queue and worker thread."""

    def __init__(self, settings: ModelSettings, queue_size: int = 8, timeout_s: float = 60.0):
        self.settings = settings
        self.timeout_s = timeout_s
        self.jobs: queue.Queue = queue.Queue(maxsize=max(1, queue_size))
        self.state = NOT_LOADED
        self.message = "The model loads on the first question."
        self.scorer: Scorer | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._recent_ms: list[float] = []

    # -- state ---------------------------------------------------------------------------------
    def status(self) -> dict:
        """What the page shows: state, a sentence, and the model's facts once loaded."""
        info = {"state": self.state, "message": self.message, "queued": self.jobs.qsize()}
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
            self.scorer = Scorer(load(self.settings))
        except Exception as error:  # noqa: BLE001 - any failure leaves the site up and says why
            log.exception("live scoring model failed to load")
            self._fail(str(error) if isinstance(error, ModelUnavailable) else f"The model failed to load: {error}")
            self._drain()
            return
        loaded = self.scorer.loaded
        self.state = READY
        self.message = f"Ready: {loaded.name} on {loaded.device} (loaded in {loaded.load_seconds:.1f} s)."
        self._ready.set()
        while True:
            kwargs, future = self.jobs.get()
            if not future.set_running_or_notify_cancel():
                continue  # its caller gave up waiting
            started = time.perf_counter()
            try:
                future.set_result(self.scorer.score(**kwargs))
            except Exception as error:  # noqa: BLE001 - handed to the waiting request
                future.set_exception(error)
            self._recent_ms = (self._recent_ms + [(time.perf_counter() - started) * 1000])[-20:]

    def _drain(self) -> None:
        """After a failed load, answer everyone still waiting with the reason."""
        while True:
            try:
                _, future = self.jobs.get_nowait()
            except queue.Empty:
                return
            if future.set_running_or_notify_cancel():
                future.set_exception(ModelUnavailable(self.message))

    # -- requests -------------------------------------------------------------------------------
    def retry_after(self) -> int:
        """Seconds until the queue has probably moved: queued jobs times recent time per job."""
        per_job_s = (sum(self._recent_ms) / len(self._recent_ms) / 1000) if self._recent_ms else 2.0
        return max(1, round(per_job_s * (self.jobs.qsize() + 1)))

    def score(self, **kwargs) -> dict:
        """Queue one question and wait for its result (Scorer.score's arguments)."""
        self.start()
        if self.state == FAILED:
            raise ModelUnavailable(self.message)
        future: Future = Future()
        try:
            self.jobs.put_nowait((kwargs, future))
        except queue.Full:
            raise QueueFull(self.retry_after()) from None
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            future.cancel()
            if self.state == FAILED:
                raise ModelUnavailable(self.message) from None
            if self.state == LOADING:
                raise StillLoading(self.message) from None
            raise ScoringTimeout(f"Scoring took longer than {self.timeout_s:g} s and was abandoned.") from None
