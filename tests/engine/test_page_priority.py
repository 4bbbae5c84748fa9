"""Pages yield the cores to the model (issue 26, item 11): request threads lower their own CPU
priority (app.py), and the model's worker thread keeps the priority of the thread that made the
service, whichever request thread later asks for the model."""
from __future__ import annotations

import os
import sys
import threading

import pytest

from app import PAGE_NICENESS, yielding_to_the_model
from livescoring.model import ModelSettings
from livescoring.worker import READY, ScoringService

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priority is Linux's")


def priority(thread_id: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, thread_id)


def in_a_thread(work):
    found = {}
    thread = threading.Thread(target=lambda: found.update(work()))
    thread.start()
    thread.join()
    return found


def test_a_request_thread_lowers_its_own_priority_once_and_serves_the_request():
    calls = []
    wsgi = yielding_to_the_model(lambda environ, start: calls.append(environ) or [b"ok"])
    mine = priority(threading.get_native_id())

    def two_requests():
        first = wsgi({"n": 1}, None)
        after_one = priority(threading.get_native_id())
        wsgi({"n": 2}, None)
        return {"first": first, "after_one": after_one, "after_two": priority(threading.get_native_id())}

    found = in_a_thread(two_requests)
    assert found["first"] == [b"ok"] and [c["n"] for c in calls] == [1, 2]
    assert found["after_one"] == found["after_two"] == mine + PAGE_NICENESS
    assert priority(threading.get_native_id()) == mine  # the serving process's other threads keep theirs


def test_the_models_worker_keeps_its_makers_priority_when_a_lowered_thread_starts_it(tmp_path):
    settings = ModelSettings.from_config({"SCORER_MODEL": str(tmp_path / "no-model"), "SCORER_DEVICE": "cpu",
                                          "SCORER_DTYPE": "auto", "SCORER_THREADS": 1,
                                          "MODEL_CACHE_DIR": tmp_path, "SCORER_MAX_CONTEXT": 0})
    service = ScoringService(settings)  # made here, as the server makes it at start-up
    mine = priority(threading.get_native_id())

    def lowered_request_starts_the_model():
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), mine + PAGE_NICENESS)
        service.start()
        return {"worker": priority(service.worker.native_id)}

    assert in_a_thread(lowered_request_starts_the_model)["worker"] == mine


def serving(settings: ModelSettings) -> ScoringService:
    """The service's worker serving, with no model: generations only need the worker's loop."""
    service = ScoringService(settings)
    service.state = READY
    threading.Thread(target=service._serve, daemon=True).start()
    return service


def test_the_model_runs_on_one_torch_thread_while_a_page_is_answered_and_on_scorer_threads_after(tmp_path):
    torch = pytest.importorskip("torch")
    settings = ModelSettings(model=str(tmp_path / "no-model"), device="cpu", threads=2, cache_dir=tmp_path)
    service = serving(settings)
    page_started, page_may_end = threading.Event(), threading.Event()

    def site(environ, start_response):
        if environ["PATH_INFO"] == "/page":
            page_started.set()
            page_may_end.wait(10)
            return [b"a page"]

        def torch_threads_in_the_worker():  # runs in the model's worker, one step at a time
            yield {"threads": torch.get_num_threads()}

        return [str(next(service.stream_steps(torch_threads_in_the_worker()))["threads"]).encode()]

    wsgi = yielding_to_the_model(site, service)

    def get(path: str, method: str = "GET") -> bytes:
        return b"".join(wsgi({"PATH_INFO": path, "REQUEST_METHOD": method}, None))

    page = threading.Thread(target=get, args=("/page",))
    page.start()
    assert page_started.wait(10)
    assert get("/model", "POST") == b"1"
    page_may_end.set()
    page.join(10)
    assert get("/model", "POST") == b"2"  # back to SCORER_THREADS


def test_pages_take_turns_while_the_model_has_work_and_run_together_when_it_has_none(tmp_path):
    service = serving(ModelSettings(model=str(tmp_path / "no-model"), device="cpu", threads=1, cache_dir=tmp_path))
    entered = {name: threading.Event() for name in ("a", "b", "c", "d")}
    may_end = threading.Event()

    def site(environ, start_response):
        entered[environ["PATH_INFO"].strip("/")].set()
        may_end.wait(10)
        return [b"a page"]

    wsgi = yielding_to_the_model(site, service)

    def fetch(name: str) -> threading.Thread:
        thread = threading.Thread(target=wsgi, args=({"PATH_INFO": f"/{name}", "REQUEST_METHOD": "GET"}, None))
        thread.start()
        return thread

    pages = [fetch("a"), fetch("b")]  # the model idle: both pages run at once
    assert entered["a"].wait(10) and entered["b"].wait(10)
    may_end.set()
    for page in pages:
        page.join(10)

    model_may_end = threading.Event()

    def long_answer():
        yield {"started": True}
        model_may_end.wait(10)
        yield {"done": True}

    stream = service.stream_steps(long_answer())  # the model busy with a generation
    may_end.clear()
    pages = [fetch("c")]
    assert entered["c"].wait(10)
    pages.append(fetch("d"))
    assert not entered["d"].wait(0.5)  # its turn comes when "c" has its body
    may_end.set()
    assert entered["d"].wait(10)
    model_may_end.set()
    assert list(stream) == [{"started": True}, {"done": True}]
    for page in pages:
        page.join(10)
