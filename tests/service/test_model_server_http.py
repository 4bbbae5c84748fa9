"""The model server's HTTP layer and its job queue, without the model (livescoring/server.py).

The WSGI application is called in-process with a worker whose jobs are scripted generators: the
routes' errors (the OpenAI shape, the status, the field to fix), the API key, the bounded queue's
429 with Retry-After, a job whose client left stopping before its next step, and jobs stepped in
turn. tests/model/test_model_server.py runs the same server with the real model.
"""
from __future__ import annotations

import io
import json
import threading
from types import SimpleNamespace

import pytest

from livescoring import model_thread
from livescoring import openai_api as api
from livescoring.model import ModelSettings
from livescoring.model_thread import ModelWorker
from livescoring.server import ModelServer


def call(app, method: str, path: str, body=None, headers=None, raw: bytes | None = None):
    data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "CONTENT_LENGTH": str(len(data)),
               "wsgi.input": io.BytesIO(data)}
    environ.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in (headers or {}).items()})
    got = {}

    def start_response(status, response_headers):
        got["status"], got["headers"] = int(status.split()[0]), dict(response_headers)

    chunks = b"".join(app(environ, start_response))
    return got["status"], got["headers"], json.loads(chunks)


@pytest.fixture
def worker():
    """A worker whose model is never loaded; the tests run its job loop where they need it."""
    return ModelWorker(ModelSettings(model="smollm2"), max_waiting=2, max_active=1)


def test_loading_model_answers_503_with_retry_after(worker):
    status, headers, body = call(ModelServer(worker, "smollm2"), "GET", "/health")
    assert status == 503 and headers["Retry-After"] == "5"
    assert body["error"]["message"] == "The model is loading."


def test_errors_have_the_openai_shape(worker):
    app = ModelServer(worker, "smollm2")
    status, _, body = call(app, "GET", "/v2/nothing")
    assert status == 404 and set(body["error"]) == {"message", "type", "param", "code"}
    assert call(app, "GET", "/v1/completions")[0] == 405
    status, _, body = call(app, "POST", "/v1/completions", raw=b"{not json")
    assert status == 400 and "JSON" in body["error"]["message"]
    status, _, body = call(app, "POST", "/v1/completions", raw=b"[1, 2]")
    assert status == 400 and "object" in body["error"]["message"]


def test_api_key_is_asked_on_every_route_but_health(worker):
    app = ModelServer(worker, "smollm2", api_key="s3cret")
    assert call(app, "GET", "/health")[0] == 503  # no key needed: it only says whether the model is up
    for method, path in (("GET", "/v1/models"), ("POST", "/v1/completions"), ("POST", "/tokenize"),
                         ("GET", "/tokenizer_info")):
        status, _, body = call(app, method, path, {})
        assert status == 401 and "Bearer" in body["error"]["message"], path
        assert call(app, method, path, {}, {"Authorization": "Bearer wrong"})[0] == 401
        assert call(app, method, path, {}, {"Authorization": "Bearer s3cret"})[0] == 503  # past the key


@pytest.mark.parametrize("body, status, field", [
    ({"prompt": "x", "temperature": 0.7}, 400, "temperature"),
    ({"prompt": "x", "n": 2}, 400, "n"),
    ({"prompt": "x", "logprobs": 21}, 400, "logprobs"),
    ({"prompt": "x", "max_tokens": 0}, 400, "max_tokens"),  # 0 only with echo
    ({"prompt": "x", "max_tokens": "3"}, 400, "max_tokens"),
    ({"prompt": [[1, -2]]}, 400, "prompt"),
    ({"prompt": [[1, 99999999]]}, 400, "prompt"),
    ({"prompt": []}, 400, "prompt"),
    ({"prompt": [[1]] * 65}, 413, "prompt"),
    ({"prompt": "x", "stop": ["a"] * 17}, 400, "stop"),
    ({"prompt": "x", "stream": True, "echo": True}, 400, "stream"),
    ({}, 400, "prompt"),
])
def test_completion_requests_are_checked(body, status, field):
    with pytest.raises(api.ApiError) as refused:
        api.completion_request(body, vocabulary=49152, max_new_tokens=512)
    assert (refused.value.status, refused.value.param) == (status, field)


def test_the_harness_requests_are_accepted():
    # lm_eval 0.4.13's local-completions: loglikelihood and generation payloads, as it builds them.
    scoring = api.completion_request({"model": None, "prompt": [[1, 2, 3]], "temperature": 0, "max_tokens": 1,
                                      "logprobs": 1, "seed": 1234, "echo": True}, 49152, 512)
    assert scoring.echo and scoring.prompts == ((1, 2, 3),) and scoring.sampling.logprobs == 1
    writing = api.completion_request({"prompt": [[5, 6]], "model": "m", "max_tokens": 256, "temperature": 0,
                                      "stop": ["</s>", "\n\n", "<|im_end|>"], "seed": 1234}, 49152, 512)
    assert writing.sampling.max_tokens == 256 and writing.sampling.stop == ("</s>", "\n\n", "<|im_end|>")
    with pytest.raises(api.ApiError) as other:
        api.check_model({"model": "gpt-4"}, "smollm2")
    assert other.value.status == 404


def run_jobs(worker: ModelWorker) -> None:
    threading.Thread(target=worker.serve_jobs, daemon=True).start()


def test_a_full_queue_answers_429_with_retry_after(worker):
    release = threading.Event()

    def held():
        release.wait(10)
        yield None
        return "done"

    worker.state = "ready"
    jobs = [worker.submit(held()) for _ in range(2)]  # two waiting: the queue is full
    with pytest.raises(api.ApiError) as refused:
        worker.submit(held())
    assert refused.value.status == 429 and refused.value.retry_after >= 1
    run_jobs(worker)
    release.set()
    assert [job.next(10) for job in jobs] == [("done", "done")] * 2


def test_a_job_whose_client_left_stops_before_its_next_step(worker):
    steps_run = []
    left = threading.Event()

    def long_job():
        for i in range(1000):
            steps_run.append(i)
            if i == 2:
                left.set()
            yield None
        return "finished"

    worker.state = "ready"
    job = worker.submit(long_job(), gone=left.is_set)
    run_jobs(worker)
    kind, error = job.next(10)
    assert kind == "error" and error.status == 499
    assert len(steps_run) == 3  # the step that saw the client go was the last


def test_running_jobs_take_turns(worker):
    worker.max_active = 2
    order = []

    def job(name):
        for _ in range(3):
            order.append(name)
            yield None
        return name

    worker.state = "ready"
    a, b = worker.submit(job("a")), worker.submit(job("b"))
    run_jobs(worker)
    assert a.next(10) == ("done", "a") and b.next(10) == ("done", "b")
    assert order == ["a", "b", "a", "b", "a", "b"]


def test_long_jobs_wait_for_room_in_the_token_budget_and_short_ones_pass_them(worker):
    """Long jobs start while their tokens fit the budget, in the order they came; a short job (a live
    question) starts beside them whatever they hold."""
    worker.max_active, worker.max_waiting, worker.max_running_tokens = 4, 8, 5000
    order = []

    def job(name, passes):
        for _ in range(passes):
            order.append(name)
            yield None
        return name

    worker.state = "ready"
    jobs = [worker.submit(job("long1", 3), tokens=3000), worker.submit(job("long2", 3), tokens=3000),
            worker.submit(job("long3", 1), tokens=1500), worker.submit(job("short", 1), tokens=700)]
    run_jobs(worker)
    assert [j.next(10) for j in jobs] == [("done", name) for name in ("long1", "long2", "long3", "short")]
    # long2 (3,000 more) waits for long1 to end, and long3 (it would fit) waits behind it; short does not.
    assert order == ["long1", "short", "long1", "long1", "long2", "long3", "long2", "long2"]


def test_the_client_reads_written_token_ids_or_tokenises_written_text():
    """vLLM's return_tokens_as_token_ids gives the ids; a server that gives the tokens' text (SGLang)
    has the text tokenised after the context, as the harness splits a continuation."""
    from livescoring.client import ModelClient

    client = ModelClient("http://127.0.0.1:9")
    with_ids = {"logprobs": {"tokens": ["token_id:5", "token_id:17"]}}
    assert client._written_ids(with_ids, [1, 2]) == [5, 17]
    vocabulary = {"ab": [1, 2], "ab cd": [1, 2, 40, 41]}
    client.encode = vocabulary.__getitem__
    client._call = lambda path, body=None, headers=None: {"prompt": "ab"}
    assert client._written_ids({"logprobs": {"tokens": [" c", "d"]}}, [1, 2]) == [40, 41]


def test_the_idle_model_thread_keeps_looking_at_the_cores(worker, monkeypatch):
    """With no job, the model thread still looks at the cores every IDLE_LOOK_S, so the threads
    are back up once other processes left them free, before the next question's first pass."""
    monkeypatch.setattr(model_thread, "IDLE_LOOK_S", 0.02)
    looks = threading.Semaphore(0)
    worker.cores = SimpleNamespace(before_pass=looks.release)
    worker.state = "ready"
    run_jobs(worker)
    assert all(looks.acquire(timeout=10) for _ in range(3))  # three looks with nothing to run
