"""The model server's one model thread: it loads the model, then steps every request's job in turn.

Every request to the model server (server.py) is a job: a generator that runs one forward pass
per step. :class:`ModelWorker` steps the running jobs in turn (at most ``max_active`` at once, so a
long prompt does not hold back a short generation) and takes new ones from a bounded queue: past
``max_waiting`` waiting jobs a request gets 429 with Retry-After. A job whose client left stops
before its next pass. No HTTP here: the server turns requests into jobs and events into answers.
"""
from __future__ import annotations

import collections
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from . import openai_api as api
from .core_share import CoreShare, products_reproducible_across_threads
from .greedy import greedy_decode, streamed
from .model import ModelSettings, ModelUnavailable, load
from .prompt_reader import CACHE_BYTES, PromptReader
from .scorer import return_freed_memory

log = logging.getLogger("livescoring.server")

MAX_WAITING = 64  # jobs waiting for the model; lm_eval's few concurrent requests never meet this
MAX_ACTIVE = 4  # jobs stepped in turn
# The tokens (prompt and written) of the long jobs running at once. A running read holds its keys and
# values (about 46 KiB a token) and its blocks until it ends: four 3,000-token prompts side by side took
# the server past 1.5 GiB (docs/performance.md). Running long jobs one after another costs no
# throughput (the worker does one pass at a time), only the later ones' start.
MAX_RUNNING_TOKENS = 6144
SHORT_JOB_TOKENS = 1024  # a job this short (a live question, 5 shots included) never waits for long ones
IDLE_LOOK_S = 0.25  # how often the idle model thread looks at the cores (a /proc read; RAISE_AFTER_S is 1 s)

MMAP_THRESHOLD_BYTES = 2**20  # a pass's log-probabilities (12 MiB at 64 tokens), a read's keys and values, a block's


def map_large_allocations() -> None:
    """Have glibc map every allocation of MMAP_THRESHOLD_BYTES or more on its own, and give it back
    when it is freed (unless MALLOC_MMAP_THRESHOLD_ is set: glibc has read it). By default the
    threshold rises to the largest block freed, up to 32 MiB, so the tensors above came from the heap,
    where long-lived ones between freed ones kept hundreds of MiB of holes resident: four long prompts
    read side by side took the server to 1.9 GiB (docs/performance.md). The many smaller tensors of a
    pass stay in the heap, which their like sizes reuse. Not glibc: nothing."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return
    import ctypes
    import ctypes.util

    try:
        m_mmap_threshold = -3  # malloc.h
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt(m_mmap_threshold, MMAP_THRESHOLD_BYTES)
    except (OSError, AttributeError):
        pass


def generation_steps(reader: PromptReader, tokens: list[int], max_tokens: int, stop: tuple[str, ...],
                     stream: bool, prompt_values: bool = False):
    """Read the prompt (its own tokens' values where ``prompt_values``: an echo's), then write up to
    ``max_tokens`` greedy tokens (greedy.py's loop, stop strings cut as lm-evaluation-harness cuts
    them). Yields {"text": piece} as text is known not to begin a stop string (``stream``), else
    None per pass; returns the prompt's read, the written tokens (with the end-of-text token when
    it came), the log-softmax row each was taken from, the text, the finish reason and the stop
    string met."""
    # One token written: no pass after the prompt, so its keys and values are not needed.
    read = yield from reader.steps(tokens, keep_past=max_tokens > 1, values=prompt_values, room=max_tokens)
    eos = reader.loaded.tokenizer.eos_token_id
    rows = [read.next_row]
    # The read is answered after the generation; its keys and values are freed as soon as it ends.
    state = {"past": read.past}
    read.past = None

    def logits_after(token: int):
        row = reader.extended(token, state["past"])
        rows.append(row)
        return row

    step = yield from streamed(greedy_decode(reader.loaded.tokenizer, read.next_row, logits_after, max_tokens, stop),
                               stop, stream, finished=state.clear)
    written = list(step.written) + ([eos] if step.reason == "end of text" else [])
    finish = "length" if step.reason == "length" else "stop"
    return read, written, rows[:len(written)], step.text, finish, step.stop_string


@dataclass(eq=False)
class Job:
    """One request's work: ``steps`` yields None (a pass done) or an event for the caller, and
    returns the result. Its events reach the caller through ``events``."""

    steps: Iterator
    gone: Callable[[], bool]
    tokens: int = 0  # the most tokens it holds keys and values for at once (its longest prompt, and what it writes)
    events: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    cancelled: threading.Event = field(default_factory=threading.Event)

    def next(self, timeout: float):
        """The next ("event", dict), ("done", result) or ("error", exception)."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            self.cancelled.set()
            return "error", api.ApiError(504, f"no answer from the model within {timeout:g} s", kind="timeout")


class ModelWorker:
    """The one owner of the model: loads it, then steps the jobs in turn."""

    def __init__(self, settings: ModelSettings, cache_bytes: int = CACHE_BYTES, max_waiting: int = MAX_WAITING,
                 max_active: int = MAX_ACTIVE, max_running_tokens: int = MAX_RUNNING_TOKENS):
        self.settings, self.cache_bytes = settings, cache_bytes
        self.max_waiting, self.max_active = max(1, max_waiting), max(1, max_active)
        self.max_running_tokens = max_running_tokens
        self.waiting: collections.deque[Job] = collections.deque()
        self.running: list[Job] = []
        self.changed = threading.Condition()
        self.state, self.message = "loading", "The model is loading."
        self.loaded = self.reader = self.cores = None
        self.tokenizer = None  # the request threads' own copy (tokenisation beside the model's work)
        self.tokenizing = threading.Lock()
        self.tokenizer_json: bytes | None = None  # tokenizer_file's answer, made on first request
        self.ms_per_pass = 50.0
        self.trim_due = False  # a long job finished since the heap was last trimmed
        self.thread = threading.Thread(target=self._run, name="model-worker", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def submit(self, steps: Iterator, gone: Callable[[], bool] = lambda: False, tokens: int = 0) -> Job:
        if self.state != "ready":
            raise api.ApiError(503, self.message, kind="unavailable", retry_after=5)
        job = Job(steps, gone, tokens)
        with self.changed:
            if len(self.waiting) >= self.max_waiting:
                wait = max(1, round((len(self.waiting) + len(self.running)) * self.ms_per_pass * 4 / 1000))
                raise api.ApiError(429, f"{len(self.waiting)} requests are waiting for the model; try again in "
                                        f"about {wait} s", kind="rate_limit_error", retry_after=wait)
            self.waiting.append(job)
            self.changed.notify()
        return job

    def _run(self) -> None:
        import copy

        try:
            reproducible = products_reproducible_across_threads()
            self.loaded = load(self.settings, module=False)
            self.reader = PromptReader(self.loaded, self.cache_bytes)
            if reproducible:
                import torch

                self.cores = CoreShare(self.loaded.threads, torch.set_num_threads)
                if hasattr(self.loaded.decoder, "between_layers"):  # the lean decoder: looked at between its layers too
                    self.loaded.decoder.between_layers = self.cores.before_pass
            self.tokenizer = copy.deepcopy(self.loaded.tokenizer)
        except ModelUnavailable as error:
            self.state, self.message = "failed", str(error)
            log.error("%s", error)
            return
        self.state, self.message = "ready", "ready"
        log.info("model ready: %s (%s, %s, %d threads) in %.1f s", self.loaded.name, self.loaded.device,
                 self.loaded.dtype, self.loaded.threads, self.loaded.load_seconds)
        self.serve_jobs()

    def serve_jobs(self) -> None:
        """Step the running jobs in turn, taking waiting ones in as places free up (forever). While
        none runs, look at the cores every IDLE_LOOK_S: the threads go back up once other processes
        have left the cores free long enough (CoreShare's RAISE_AFTER_S), not only after that long of
        passes, so the first question after a busy spell (a page storm ending) runs on every core."""
        while True:
            with self.changed:
                if not self.waiting and not self.running:
                    self.changed.wait(IDLE_LOOK_S if self.cores is not None else None)
                while len(self.running) < self.max_active and (job := self._next_to_run()) is not None:
                    self.waiting.remove(job)
                    self.running.append(job)
                turn = list(self.running)
            if not turn and self.cores is not None:
                self.cores.before_pass()
            for job in turn:
                self._step(job)

    def _next_to_run(self) -> Job | None:
        """The first waiting job that may start (under ``changed``): a short one always; a long one
        when the long ones running leave room for its tokens, or none runs. Long jobs start in
        the order they came: one that must wait holds back the long ones behind it, not the short."""
        held = sum(job.tokens for job in self.running if job.tokens > SHORT_JOB_TOKENS)
        long_one_waits = False
        for job in self.waiting:
            if job.tokens <= SHORT_JOB_TOKENS:
                return job
            if not long_one_waits and (not held or held + job.tokens <= self.max_running_tokens):
                return job
            long_one_waits = True
        return None

    def _step(self, job: Job) -> None:
        finished = None
        if job.cancelled.is_set() or job.gone():
            job.steps.close()
            finished = ("error", api.ApiError(499, "the client went away", kind="cancelled"))
        else:
            started = time.perf_counter()
            if self.cores is not None:
                self.cores.before_pass()
            try:
                item = next(job.steps)
                if item is not None:
                    job.events.put(("event", item))
            except StopIteration as done:
                finished = ("done", done.value)
            except api.ApiError as error:
                finished = ("error", error)
            except Exception as error:  # noqa: BLE001 - one request's failure must not stop the worker
                log.exception("a request failed in the model")
                finished = ("error", api.ApiError(500, f"the model failed on this request: {type(error).__name__}",
                                                  kind="server_error"))
            self.ms_per_pass = 0.9 * self.ms_per_pass + 0.1 * (time.perf_counter() - started) * 1000
        if finished is not None:
            job.events.put(finished)
            self.trim_due |= job.tokens > SHORT_JOB_TOKENS
            with self.changed:
                self.running.remove(job)
                idle = not self.running and not self.waiting
            # A long prompt's passes freed hundreds of MiB in pieces glibc keeps: give them back once
            # idle. Not after short jobs (a question: 2 ms of trimming before the next one may start).
            if idle and self.trim_due:
                self.trim_due = False
                return_freed_memory()

    # -- tokenisation, in the request threads -------------------------------------------------
    def encode(self, text: str, special: bool = False) -> list[int]:
        with self.tokenizing:
            return list(self.tokenizer(text, add_special_tokens=special)["input_ids"])

    def tokenizer_file(self) -> bytes | None:
        """The tokenizer serialised by the tokenizers library (None for a tokenizer of another kind)."""
        with self.tokenizing:
            if self.tokenizer_json is None:
                backend = getattr(self.tokenizer, "backend_tokenizer", None)
                self.tokenizer_json = backend.to_str().encode() if backend is not None else b""
            return self.tokenizer_json or None

    def decode(self, tokens) -> str:
        with self.tokenizing:
            return self.tokenizer.decode(list(tokens))

    def chat_text(self, messages) -> str:
        with self.tokenizing:
            return self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)

    def token_strings(self, tokens) -> list[str]:
        with self.tokenizing:
            return [self.tokenizer.decode([t]) for t in tokens]
