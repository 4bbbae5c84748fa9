"""One worker thread owns the model: it loads it once, then answers the waiting requests in micro-batches.

The service offers the model's narrow interface (livescoring/scorer.py) to many callers at once:
:meth:`ScoringService.loglikelihood` (a caller's requests, typically one question's continuations,
answered together) and :meth:`ScoringService.generate_until` (one generation, streamed), with
:meth:`~ScoringService.token_count` so that a caller can fit its prompt first. Jobs wait in a
bounded queue; when it is full, or when one client already has its share of it, the caller is told
to come back later (429 with Retry-After). The worker takes the oldest loglikelihood job and, with
it, the others already waiting (at most MICRO_BATCH; with the model in this process, after at most
MICRO_BATCH_WAIT_S more), and answers them in one call to ``Scorer.loglikelihood``: questions that
arrived while the model was busy share forward passes, and each answer equals the one it would get
alone. A caller that gives up (its timeout, or its client went away: ``gone``) takes its job out of
the queue; a batch whose callers have all given up stops between forward passes. Loading
happens on the first request (or at start-up with SCORER_LOAD_AT_START); meanwhile the page shows
"warming up" from :meth:`ScoringService.status`.

Generation is a lane of the same queue (:meth:`ScoringService.generate_until`; the decoding is
generate.py's): a generation waits in the same bounded queue, under the same per-client share, and the worker runs
it one forward pass at a time, interleaved with scoring batches and with the other running
generations (at most MAX_GENERATIONS at once, one per client at a time). Its
events go back to the requesting thread through a queue of its own.

Model time is shared between clients (issue 41: two addresses re-posting 512-token answers as
each ended held both places, and a third reader waited out its timeout twice; one address
re-posting the three-scorers form, up to 20 CPU-s of the model a post within its budget, kept the
model busy). A generation counts the seconds it held a place, and a scoring job its part of its
batch's seconds, against its client for GENERATION_WINDOW_S after it ends. A client past
GENERATION_SHARE_S of them waits behind every client within its share, and is refused (429 with
Retry-After: when its oldest counted work leaves the window) while another client's work waits:
for a generation, another client's generation waiting for a place (generations share the model
token by token); for scoring, any work of another client queued or running (a scoring batch holds
the whole model until it ends). And a reader kept waiting PREEMPT_AFTER_S with every place taken stops the
longest-running generation (one that has run that long too) of a client that has used more
model time than the reader's own: it ends between tokens with Preempted, whose words say it
was stopped to let another reader in. A generation stops between
tokens when its reader closes the stream, when the stream object is dropped unread (a response
closed before its first item was written), when ``gone()`` says the client left, or when the
server is stopping (:meth:`ScoringService.stop_by`): the reader then gets ServerStopping, whose
words say why. No lock is held across a request: a generation that nobody reads only ever costs
its own remaining tokens.

Long because: :class:`ScoringService` is one bounded queue under one lock. Admission, each
client's share, micro-batching, the generation lane and pre-emption all read and change the same
waiting and running jobs under that lock, and are tested together (tests/service); split into
modules, each part would reach into the others' state.
"""
from __future__ import annotations

import collections
import copy
import logging
import math
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

from .generate import MAX_NEW_TOKENS, greedy_steps
from .model import ModelSettings, ModelUnavailable, check_available, load
from .scorer import (
    PASS_TOKENS,
    Generation,
    Loglikelihood,
    LoglikelihoodAnswer,
    PromptTooLong,
    Scorer,
    ScoringCancelled,
    return_freed_memory,
)

log = logging.getLogger(__name__)

NOT_LOADED, LOADING, READY, FAILED = "not loaded", "loading", "ready", "failed"
MICRO_BATCH = 8  # questions scored together at most
MICRO_BATCH_WAIT_S = 0.005  # how long the worker waits for company once it has one job
PER_CLIENT = 2  # jobs one client may have queued or running at once
MAX_GENERATIONS = 2  # generations running side by side (each holds its own key/value cache)
# A 512-token answer holds a place about 120 s on a 2-core CPU with two running: the window and the
# share let a reader have one or two long answers in five minutes before others go first.
GENERATION_WINDOW_S = 300.0  # how long a generation's seconds count against its client after it ends
GENERATION_SHARE_S = 60.0  # a client's generation seconds in the window before others go first
PREEMPT_AFTER_S = 20.0  # a reader waiting this long (a third of SCORER_TIMEOUT_S at most) stops another's answer
GONE_POLL_S = 0.25  # how often a waiting caller asks whether its client went away
# A page shows the model server's health as of at most this long ago. Asked for every page, /health
# was 180 requests a second beside 16 page readers, each taking the model server's interpreter from
# the pass it was running (docs/performance.md).
HEALTH_FRESH_S = 1.0
CONNECT_PAUSE_S, CONNECT_PAUSE_MAX_S = 0.5, 5.0  # between tries to reach the model server (doubling)


class QueueFull(RuntimeError):
    """Too many questions are waiting (or this client has its share); ``retry_after`` is a fair guess in seconds."""

    def __init__(self, retry_after: int, message: str = "Too many questions are waiting to be scored"):
        super().__init__(f"{message}; try again in about {retry_after} s.")
        self.retry_after = retry_after


class StillLoading(RuntimeError):
    """The model is still warming up after the request's time ran out."""


class ScoringTimeout(RuntimeError):
    """Scoring took longer than SCORER_TIMEOUT_S."""


class ClientGone(ScoringTimeout):
    """The client went away (its connection closed); its work was stopped."""


class ServerStopping(ScoringTimeout):
    """The server is shutting down; a generation still running at the end of the grace is cut short."""


class Preempted(ScoringTimeout):
    """The generation was stopped between tokens to let a waiting reader in (it had run longest, for
    a client that had used more model time); ``retry_after`` is a fair guess in seconds."""

    def __init__(self, retry_after: int):
        super().__init__("Another reader was waiting for the model, and this answer had been writing longest, so it "
                         f"was stopped to let them in; ask again in about {retry_after} s.")
        self.retry_after = retry_after


@dataclass(eq=False)
class _Job:
    requests: list  # loglikelihood's (empty for a generation)
    client: object
    future: Future = field(default_factory=Future)
    abandoned: threading.Event = field(default_factory=threading.Event)
    gone: Callable[[], bool] | None = None  # whether the client has gone away (asked between steps)
    steps: Iterator | None = None  # a generation: one model step per next(); None for scoring
    events: queue.SimpleQueue | None = None  # a generation's events for its reader, then _END or an error
    queued_at: float = field(default_factory=time.monotonic)  # a waiting reader may stop another answer after PREEMPT_AFTER_S
    started_at: float = 0.0  # a generation: when it took its place
    preempted: bool = False  # a generation: stop it at its next step, to let a waiting reader in

    def unwanted(self) -> bool:
        if self.abandoned.is_set():
            return True
        try:
            return bool(self.gone is not None and self.gone())
        except Exception:  # noqa: BLE001 - a broken check counts as gone
            return True


_END = object()


class GenerationStream:
    """The reader's side of a running generation: iterate its events; ``close()`` (or dropping it
    unread) stops the generation between tokens and frees its place."""

    def __init__(self, service: ScoringService, job: _Job, first: dict):
        self._service, self._job, self._pending, self._finished = service, job, [first], False
        self._finalizer = weakref.finalize(self, job.abandoned.set)

    def __iter__(self):
        return self

    def __next__(self) -> dict:
        if self._pending:
            return self._pending.pop()
        if self._finished:
            raise StopIteration
        try:
            item = self._job.events.get(timeout=self._service.timeout_s)
        except queue.Empty:
            self.close()
            raise ScoringTimeout(f"The answer stalled for {self._service.timeout_s:g} s and was abandoned.") from None
        if item is _END or isinstance(item, BaseException):
            self._finished = True
            self._finalizer()
            if item is _END:
                raise StopIteration
            raise item
        return item

    def close(self) -> None:
        self._finished = True
        self._finalizer()


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
        self._counter: Scorer | None = None  # the callers' own tokenizer (token_count), not the worker's
        self._counting = threading.Lock()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._recent_ms: list[float] = []  # per question, so a batch of n counts n times its share
        self.generating: list[_Job] = []  # generations running, stepped in turn by the worker
        self.abandoned = 0  # generations stopped because their reader left
        # Per client, (ended, seconds) of its generations and scoring jobs that ended in the last
        # GENERATION_WINDOW_S, oldest first: one entry per job, and a client leaves when its last one is too old.
        self._model_spans: dict[object, collections.deque] = {}
        self._stop_at: float | None = None  # set by stop_by: when running generations are cut short
        self._reading_ahead = threading.Lock()  # held while a read_ahead runs
        self._health = (-math.inf, True)  # the model server's last /health: (when asked, whether it answered)
        self._asking_health = threading.Lock()
        # The worker thread waits for start(): the first request, or SCORER_LOAD_AT_START.
        self._go = threading.Event()
        self.worker = threading.Thread(target=self._when_started, name="scoring-worker", daemon=True)
        self.worker.start()

    # -- state ---------------------------------------------------------------------------------
    def status(self, fresh: bool = False) -> dict:
        """What the page shows: state, a sentence, and the model's facts once loaded. With a model
        server, whether it answers is asked afresh when ``fresh`` (the live forms' status API; unless
        another thread is asking), and for a page at most every HEALTH_FRESH_S."""
        info = {"state": self.state, "message": self.message, "queued": len(self.waiting),
                "generating": len(self.generating), "abandoned": self.abandoned}
        if self.remote and self.state == READY and not self._server_answers(fresh):
            info.update(state=LOADING, restarting=True,
                        message="The model server is restarting; live answers resume in a moment.")
        if self.scorer is not None:
            loaded = self.scorer.loaded
            info["model"] = {"name": loaded.name, "device": loaded.device, "dtype": loaded.dtype,
                             "threads": loaded.threads, "load_seconds": round(loaded.load_seconds, 2),
                             "from_cache": loaded.from_cache}
        return info

    def _server_answers(self, fresh: bool) -> bool:
        """Whether the model server answers /health: the last answer while it is under HEALTH_FRESH_S
        old (unless ``fresh``), or while another thread is asking (a hung server holds that one
        request for the health check's timeout, not every page)."""
        asked, answers = self._health
        if not fresh and time.monotonic() - asked < HEALTH_FRESH_S:
            return answers
        if not self._asking_health.acquire(blocking=False):
            return answers
        try:
            answers = self.scorer.client.health()
            self._health = (time.monotonic(), answers)
        finally:
            self._asking_health.release()
        return answers

    def start(self) -> None:
        """Begin loading in the worker thread (idempotent); a missing model fails at once."""
        with self._lock:
            if self.state != NOT_LOADED:
                return
            if not self.remote:
                try:
                    check_available(self.settings)
                except ModelUnavailable as error:
                    self._fail(str(error))
                    return
            self.state, self.message = LOADING, ("Connecting to the model server." if self.remote
                                                 else "Warming up: loading the model.")
            self._go.set()

    def _fail(self, message: str) -> None:
        self.state, self.message = FAILED, message
        self._ready.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the model is ready or failed; True when ready."""
        self._ready.wait(timeout)
        return self.state == READY

    # -- the worker thread ----------------------------------------------------------------------
    def _when_started(self) -> None:
        self._go.wait()
        self._run()

    @property
    def remote(self) -> bool:
        """Whether a model server answers for the model (MODEL_SERVER_URL) instead of this process."""
        return bool(self.settings.server_url)

    def _connect(self) -> None:
        """Reach the model server, again and again until it answers (it may be starting, loading its
        model, or restarting): meanwhile the state says so, and a request waiting for the model is
        answered at once while the server cannot be reached."""
        from .client import ModelClient, ModelServerError
        from .remote import RemoteModel

        client = ModelClient(self.settings.server_url, self.settings.api_key or None, self.timeout_s)
        pause = CONNECT_PAUSE_S
        while True:
            try:
                self.scorer = RemoteModel(client)
                break
            except ModelServerError as error:
                if error.status == 503:
                    self.state, self.message = LOADING, "The model server is loading the model."
                else:  # its address and the error go to the log; the reader is told what to expect
                    log.warning("the model server at %s does not answer: %s", client.base_url, error)
                    self._fail("The model server does not answer; the site keeps trying, so try again in a minute.")
                time.sleep(pause)
                pause = min(CONNECT_PAUSE_MAX_S, pause * 2)
        loaded = self.scorer.loaded
        self.state = READY
        self.message = f"Ready: {loaded.name} on the model server."
        self._ready.set()
        self._serve()

    def _run(self) -> None:
        if self.remote:
            self._connect()
            return
        try:
            self.scorer = Scorer(load(self.settings), batch_rows=self.micro_batch, pass_tokens=PASS_TOKENS)
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
        """Score micro-batches and step generations for ever (the worker thread's life once the model
        is loaded): each turn, one scoring batch (if any waits), then one step of each running generation."""
        while True:
            batch = self._next_batch()
            if batch:
                self._score_batch(batch)
            for job in list(self.generating):
                self._step(job)

    def _score_batch(self, batch: list[_Job]) -> None:
        started = time.perf_counter()
        try:
            answers = self.scorer.loglikelihood([r for job in batch for r in job.requests],
                                                stop=lambda jobs=batch: all(job.unwanted() for job in jobs))
        except ScoringCancelled as error:
            for job in batch:
                job.future.set_exception(ScoringTimeout(str(error)))
        except Exception:  # noqa: BLE001 - one bad question must not fail the others: score them alone
            for job in batch:
                self._score_alone(job)
        else:
            start = 0
            for job in batch:
                job.future.set_result(answers[start:start + len(job.requests)])
                start += len(job.requests)
        elapsed_ms = (time.perf_counter() - started) * 1000
        self._recent_ms = (self._recent_ms + [elapsed_ms / len(batch)] * len(batch))[-20:]
        self._finished(batch, elapsed_ms / 1000)

    def _score_alone(self, job: _Job) -> None:
        try:
            job.future.set_result(self.scorer.loglikelihood(job.requests))
        except Exception as error:  # noqa: BLE001 - handed to the waiting request
            job.future.set_exception(error)

    def _step(self, job: _Job) -> None:
        """One forward pass of a running generation; its event (if any) goes to its reader. A
        generation nobody wants any more, or still running when the server must stop, ends here."""
        if job.unwanted():
            error: BaseException = ClientGone("The client went away; its answer was stopped.")
            self.abandoned += 1
        elif job.preempted:
            error = Preempted(self._share_back_in(job.client, time.monotonic()))
        elif self._stop_at is not None and time.monotonic() >= self._stop_at:
            error = ServerStopping("The server is shutting down, so this answer was cut short before it was "
                                   "finished; ask again in a minute.")
        else:
            try:
                event = next(job.steps)
            except StopIteration:
                self._end_generation(job, _END)
                return
            except Exception as failure:  # noqa: BLE001 - handed to the reader
                error = failure
            else:
                if event is not None:
                    job.events.put(event)
                return
        job.steps.close()
        self._end_generation(job, error)

    def _end_generation(self, job: _Job, last) -> None:
        job.events.put(last)
        with self._changed:
            self.generating.remove(job)
            self._release(job.client)
            now = time.monotonic()
            self._count(job.client, now, now - job.started_at)
            self._changed.notify_all()
        return_freed_memory()  # a generation's cache and prompt pass: tens to hundreds of MiB, in pieces

    def _count(self, client, now: float, seconds: float) -> None:
        """``client``'s job that ended now held the model ``seconds`` (under self._changed); work
        older than GENERATION_WINDOW_S leaves every client's count."""
        self._model_spans.setdefault(client, collections.deque()).append((now, seconds))
        for other, spans in list(self._model_spans.items()):
            while spans and spans[0][0] <= now - GENERATION_WINDOW_S:
                spans.popleft()
            if not spans:
                del self._model_spans[other]

    def _model_use(self, client, now: float) -> float:
        """Seconds ``client``'s work held the model: its generations and scoring jobs that ended in
        the last GENERATION_WINDOW_S, and its running generation's so far."""
        ended = sum(seconds for end, seconds in self._model_spans.get(client, ()) if end > now - GENERATION_WINDOW_S)
        return ended + sum(now - job.started_at for job in self.generating if job.client == client)

    def _over_share(self, client, now: float) -> bool:
        return self._model_use(client, now) > GENERATION_SHARE_S

    def _share_back_in(self, client, now: float) -> int:
        """Seconds until ``client``'s model time is back within its share, as its oldest
        work leaves the window (1 when it is within; GENERATION_WINDOW_S when its running one
        alone is over)."""
        over = self._model_use(client, now) - GENERATION_SHARE_S
        if over <= 0:
            return 1
        for end, seconds in self._model_spans.get(client, ()):
            if end > now - GENERATION_WINDOW_S:
                over -= seconds
                if over <= 0:
                    return max(1, round(end + GENERATION_WINDOW_S - now))
        return round(GENERATION_WINDOW_S)

    def _in_turn(self, generations: bool, now: float) -> list[_Job]:
        """The waiting generations (or scoring jobs) in the order they get the model: clients within
        their share first, then the others, each oldest first."""
        waiting = [job for job in self.waiting if (job.steps is not None) == generations]
        return sorted(waiting, key=lambda job: self._over_share(job.client, now))  # stable: oldest first within

    def _admit_generations(self) -> None:
        """Start waiting generations (in _in_turn's order) while fewer than MAX_GENERATIONS
        run; a client runs one at a time (its next one waits), so one reader's requests never fill
        every place. With every place taken, a reader kept waiting may stop another's (_preempt)."""
        now = time.monotonic()
        running = {job.client for job in self.generating}
        for job in self._in_turn(True, now):
            if job.client in running:
                continue
            if len(self.generating) >= MAX_GENERATIONS:
                self._preempt(job, now)
                return
            self.waiting.remove(job)
            job.future.set_running_or_notify_cancel()
            job.started_at = now
            self.generating.append(job)
            running.add(job.client)

    def _preempt(self, reader: _Job, now: float) -> None:
        """``reader``'s generation is next for a place and every place is taken: once it has waited
        PREEMPT_AFTER_S (a third of the service's timeout at most, so it starts in time), the
        longest-running generation that has run as long, of a client that has used more model
        time than the reader's, is marked to stop at its next step (one at a time)."""
        wait = min(PREEMPT_AFTER_S, self.timeout_s / 3)
        if now - reader.queued_at < wait or any(job.preempted for job in self.generating):
            return
        mine = self._model_use(reader.client, now)
        longer = [job for job in self.generating
                  if now - job.started_at >= wait and self._model_use(job.client, now) > mine]
        if longer:
            min(longer, key=lambda job: job.started_at).preempted = True

    def _scoring_waiting(self) -> int:
        return sum(1 for job in self.waiting if job.steps is None)

    def _next_batch(self) -> list[_Job]:
        """The waiting scoring jobs next in turn (at most micro_batch: oldest first, clients past their
        share last), marked running, after starting any generation that may start; empty when only
        generations have work.

        Jobs whose callers gave up were already taken out of the queue (see _abandon), under the
        same lock, so every job taken here is still wanted."""
        with self._changed:
            while not self.waiting and not self.generating:
                self._changed.wait()
            self._admit_generations()
            # Company is worth waiting for only where it shares passes: the scorer in this process packs
            # a batch's rows into them. The project's model server reads a request's prompts one after
            # another, so there a lone question would wait MICRO_BATCH_WAIT_S for nothing; the questions
            # that queue while a batch runs still go together, to any server.
            if not self.remote and not self.generating and self._scoring_waiting():
                deadline = time.monotonic() + MICRO_BATCH_WAIT_S
                while self._scoring_waiting() < self.micro_batch and (left := deadline - time.monotonic()) > 0:
                    self._changed.wait(left)
                self._admit_generations()
            batch = self._in_turn(False, time.monotonic())[:self.micro_batch]
            for job in batch:
                self.waiting.remove(job)
                job.future.set_running_or_notify_cancel()
            return batch

    def _finished(self, batch: list[_Job], seconds: float) -> None:
        """A scoring batch's jobs leave, each counting its part of the batch's ``seconds`` (by its
        requests) against its client's share."""
        requests = sum(len(job.requests) for job in batch) or 1
        with self._changed:
            now = time.monotonic()
            for job in batch:
                self._release(job.client)
                self._count(job.client, now, seconds * len(job.requests) / requests)

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
                if job.events is not None:
                    job.events.put(ModelUnavailable(self.message))

    # -- requests -------------------------------------------------------------------------------
    def outstanding(self) -> int:
        """Requests waiting for the model: queued, being scored or generating."""
        with self._changed:
            return sum(self._per_client.values())

    def retry_after(self) -> int:
        """Seconds until the queue has probably moved: queued jobs times recent time per job."""
        per_job_s = (sum(self._recent_ms) / len(self._recent_ms) / 1000) if self._recent_ms else 2.0
        return max(1, round(per_job_s * (len(self.waiting) + 1)))

    def _ready_scorer(self) -> Scorer:
        """The loaded scorer, once the model is ready (loading it if it must): ModelUnavailable, or
        StillLoading after SCORER_TIMEOUT_S."""
        self.start()
        if self.state == FAILED:
            raise ModelUnavailable(self.message)
        if not self.wait_ready(self.timeout_s):
            if self.state == FAILED:
                raise ModelUnavailable(self.message)
            raise StillLoading(self.message)
        return self.scorer

    def token_count(self, context: str, continuations=()) -> int:
        """Scorer.token_count, in the caller's thread (a fast tokenizer is not safe to share with the
        worker's, so the callers share a copy of their own); waits for the model as :meth:`_ready_scorer`."""
        scorer = self._ready_scorer()
        if self.remote:  # the server counts, on its own copy of the tokenizer
            return scorer.token_count(context, continuations)
        with self._counting:
            if self._counter is None:
                loaded = copy.copy(scorer.loaded)
                loaded.tokenizer = copy.deepcopy(loaded.tokenizer)
                self._counter = Scorer(loaded, decoder=scorer.decoder)
            return self._counter.token_count(context, continuations)

    @property
    def context_length(self) -> int:
        return self._ready_scorer().context_length

    def model_facts(self) -> dict:
        return self._ready_scorer().model_facts()

    def loglikelihood(self, requests: list[Loglikelihood], client=None,
                      gone: Callable[[], bool] | None = None) -> list[LoglikelihoodAnswer]:
        """Queue ``requests`` as one job (a question's continuations, say) and wait for their answers
        (Scorer.loglikelihood's), micro-batched with other callers' jobs.

        ``client`` (for example the caller's address) limits how many jobs one caller may have
        queued or running at once; None is one more anonymous caller with no limit of its own.
        ``gone`` (for example waitress's ``waitress.client_disconnected``) is asked while it waits:
        when the client has left, the job leaves the queue (or its batch stops) and ClientGone is raised."""
        self.start()
        if self.state == FAILED:
            raise ModelUnavailable(self.message)
        job = _Job(list(requests), client if client is not None else object(), gone=gone)
        self._enqueue(job, "You already have {n} questions being scored")
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return job.future.result(timeout=max(0.0, min(GONE_POLL_S if gone else self.timeout_s,
                                                              deadline - time.monotonic())))
            except FutureTimeout:
                if gone is not None and job.unwanted():
                    self._abandon(job)
                    raise ClientGone("The client went away; its scoring was stopped.") from None
                if time.monotonic() < deadline:
                    continue
                self._abandon(job)
                if self.state == FAILED:
                    raise ModelUnavailable(self.message) from None
                if self.state == LOADING:
                    raise StillLoading(self.message) from None
                raise ScoringTimeout(f"Scoring took longer than {self.timeout_s:g} s and was abandoned.") from None

    def _enqueue(self, job: _Job, share_words: str, full_words: str | None = None) -> None:
        """Into the queue, or QueueFull when it is full or the client has its share."""
        with self._changed:
            if self._stop_at is not None and job.steps is not None:
                raise ServerStopping("The server is shutting down; try again in a minute.")
            if len(self.waiting) >= self.queue_size:
                raise QueueFull(self.retry_after(), *([full_words] if full_words else []))
            if self._per_client[job.client] >= self.per_client:
                raise QueueFull(self.retry_after(), share_words.format(n=self.per_client))
            self._refuse_past_share(job)
            self.waiting.append(job)
            self._per_client[job.client] += 1
            self._changed.notify_all()

    def _refuse_past_share(self, job: _Job) -> None:
        """QueueFull for ``job`` of a client past its share of model time while another client's work
        waits: for a generation, another client's generation waiting for a place; for scoring, any
        work of another client queued or running (under self._changed)."""
        client, now = job.client, time.monotonic()
        if not self._over_share(client, now):
            return
        if job.steps is not None:
            others_wait = any(other.steps is not None and other.client != client for other in self.waiting)
        else:
            others_wait = any(other != client for other in self._per_client)
        if others_wait:
            used = self._model_use(client, now)
            raise QueueFull(self._share_back_in(client, now),
                            f"Your questions and answers have held the model for {used:.0f} s in the last "
                            f"{GENERATION_WINDOW_S / 60:g} minutes, more than one reader's share "
                            f"({GENERATION_SHARE_S:g} s) while another reader waits")

    def generate_until(self, request: Generation, client=None,
                       gone: Callable[[], bool] | None = None) -> GenerationStream:
        """Queue one generation in the worker's lane and return its stream once the first event is
        known: ``{"text": piece}`` events as the model writes, then ``{"done": True, "reason",
        "tokens", "prompt_tokens", "ms"}`` (generate.greedy_steps). Iterate it; ``close()`` stops it.

        ``client`` and ``gone`` as for :meth:`loglikelihood`; a client runs its generations one at a
        time. Raises (before any text) ValueError (``max_gen_toks`` outside 1 to MAX_NEW_TOKENS),
        PromptTooLong, ModelUnavailable, StillLoading, QueueFull, ServerStopping, ClientGone, or
        ScoringTimeout when it waited SCORER_TIMEOUT_S without starting; an error of its first steps
        (before any event) is raised here too."""
        if not 1 <= request.max_gen_toks <= MAX_NEW_TOKENS:
            raise ValueError(f"max_new_tokens must be 1 to {MAX_NEW_TOKENS}")
        limit = self._ready_scorer().context_length
        count = self.token_count(request.context)
        if count + request.max_gen_toks > limit:
            raise PromptTooLong(f"the prompt has {count} tokens; with {request.max_gen_toks} new ones it does not fit "
                                f"the model's {limit}")
        if self.remote:
            return self.stream_steps(self.scorer.generation_steps(request), client, gone)
        with self._counting:
            ids = self._counter.encode(request.context)
        loaded = self.scorer.loaded
        # The shared leading text (a category's header and worked examples) comes from the scorer's
        # prefix cache, so a page's first token waits only for the question's own tokens.
        reuse = bool(request.shared) and request.context.startswith(request.shared) and self.scorer.reuse_prefix
        import torch  # once the model is ready: a refusal (no model, a prompt too long) never imports it

        steps = greedy_steps(loaded, torch.tensor([ids], device=loaded.device), request.max_gen_toks, request.until,
                             *((self.scorer, request.shared) if reuse else ()))
        return self.stream_steps(steps, client, gone)

    def read_ahead(self, text: str, shared: str = "") -> bool:
        """Start reading ``text`` into the model server's prefix cache in the background (a prompt the
        reader will likely ask for next), one such read at a time; whether one was started. Only with
        a model server: its own queue interleaves the read with other work pass by pass, so it never
        holds this service's worker (which waits on a remote generation's next chunk), and a reader's
        request for the same prompt meanwhile shares its passes (prompt_reader.py). Nothing waits for
        it: a refusal or failure is logged and forgotten."""
        if not self.remote or self.state != READY or not self._reading_ahead.acquire(blocking=False):
            return False

        def read() -> None:
            try:
                self.scorer.read_ahead(text, shared)
            except Exception as error:  # noqa: BLE001 - a read ahead is a hint; the reader's own request reads anyway
                log.info("read-ahead of a %d-character prompt skipped: %s", len(text), error)
            finally:
                self._reading_ahead.release()

        threading.Thread(target=read, name="read-ahead", daemon=True).start()
        return True

    def stream_steps(self, steps: Iterator, client=None, gone: Callable[[], bool] | None = None) -> GenerationStream:
        """Queue any work in the generation lane (``steps``: an iterator doing one forward pass per
        ``next()``, yielding None or an event) and wait until its first event; then stream the rest.
        :meth:`generate_until` queues greedy decoding through it; the queue's rules (one client's
        share, fairness, cancellation) are the same for any steps."""
        job = _Job([], client if client is not None else object(), gone=gone, steps=steps,
                   events=queue.SimpleQueue())
        self._enqueue(job, "You already have {n} answers being written or waiting",
                      "Too many answers are waiting to be written")
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                first = job.events.get(timeout=max(0.0, min(GONE_POLL_S, deadline - time.monotonic())))
            except queue.Empty:
                if job.unwanted():
                    self._abandon(job)
                    raise ClientGone("The client went away; its answer was stopped.") from None
                if time.monotonic() < deadline:
                    continue
                self._abandon(job)
                raise ScoringTimeout(f"The answer did not start within {self.timeout_s:g} s and was abandoned.") from None
            if isinstance(first, BaseException):
                raise first
            if first is _END:  # cannot happen: a generation always ends with its done event
                raise ScoringTimeout("The answer ended before it began.")
            return GenerationStream(self, job, first)

    def stop_by(self, deadline: float) -> None:
        """The server is stopping: generations still running at ``deadline`` (time.monotonic()) end
        with ServerStopping; new ones are refused with it."""
        with self._changed:
            self._stop_at = deadline
            self._changed.notify_all()

    def _abandon(self, job: _Job) -> None:
        """The caller gave up: out of the queue if it is still there, else flagged for the running batch."""
        job.abandoned.set()
        with self._changed:
            if job.future.cancel():  # still pending, so still in the queue (the worker takes jobs under this lock)
                self.waiting.remove(job)
                self._release(job.client)
