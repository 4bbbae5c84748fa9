"""The site as the model server's client (MODEL_SERVER_URL; livescoring/remote.py under ScoringService).

* Every live answer the site gives through the server equals the one it gives with the model in its
  own process: letter and option scores (probabilities within 1e-5, the same prediction and reading),
  the chat template's text, MMLU-Pro's streamed chain of thought (the same words).
* The web process imports no torch.
* Faults: the model server killed under load (pages keep answering 200, live requests get 503 with
  Retry-After saying the model is restarting, and it comes back: the next question is scored); a
  server that cannot be reached at start; a server that never answers (the site says it timed out);
  a server without prompt log-probabilities (refused, never scored).
* An MMLU-Pro letter score has the server read that question's chain-of-thought prompt ahead (issue
  40): one request for one token, after the score's own, with the prompt's shared part as its key.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
from conftest import app_with_model

from engine import create_app
from fake_model_server import FakeServer
from livescoring.client import TOKENIZER_PROBE, ModelClient
from tools.launcher import REPO_ROOT, free_port, running_server

pytestmark = [pytest.mark.model, pytest.mark.slow]  # slow: the site and the model server as processes
TOLERANCE = 1e-5
ORIGIN = {"Origin": "http://localhost"}


@pytest.fixture(scope="module")
def remote_app(model_server):
    return create_app({"TESTING": True, "MODEL_SERVER_URL": model_server, "PAGE_RENDER_BUDGET_S": 0})


def score(app, body: dict):
    answer = app.test_client().post("/api/score", json=body, headers=ORIGIN)
    return answer.status_code, answer.get_json(), answer.headers


@pytest.mark.parametrize("method, shots", [("letter", 5), ("option", 0)])
def test_live_answers_through_the_server_equal_the_in_process_ones(remote_app, loaded_model, method, shots):
    local = app_with_model({"PAGE_RENDER_BUDGET_S": 0}, loaded_model)
    for subject, index in (("astronomy", 2), ("high_school_biology", 7)):
        body = {"subject": subject, "split": "test", "index": index, "shots": shots, "method": method}
        status, got, _ = score(remote_app, body)
        assert status == 200, got
        _, expected, _ = score(local, body)
        assert got["prediction"] == expected["prediction"] and got["prompt"] == expected["prompt"]
        assert got["token_counts"] == expected["token_counts"]
        reading, expected_reading = got["reading"], expected["reading"]
        assert abs(reading.pop("split") - expected_reading.pop("split")) <= TOLERANCE
        assert reading == expected_reading  # the same words: coin toss or not, letters off or not
        for letter, p in expected["probabilities"].items():
            assert abs(got["probabilities"][letter] - p) <= TOLERANCE, (subject, index, letter)
        assert got["model"]["name"] == expected["model"]["name"]


def test_the_chat_template_renders_as_the_models_tokenizer_does(remote_app, loaded_model):
    from benchmarks.server import service

    with remote_app.app_context():
        service().start()
        assert service().wait_ready(120)
        rendered = service().scorer.loaded.tokenizer
    tokenizer = loaded_model.tokenizer
    for turns, prompt in (([{"role": "user", "content": "Which planet is largest?"}], True),
                          ([{"role": "system", "content": "Answer with a letter."}, {"role": "user", "content": "Q"},
                            {"role": "assistant", "content": "A"}, {"role": "user", "content": "Q2"}], True),
                          ([{"role": "user", "content": "Q"}, {"role": "assistant", "content": "B"}], False)):
        assert rendered.apply_chat_template(turns, tokenize=False, add_generation_prompt=prompt) == \
            tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=prompt)


def test_the_streamed_chain_of_thought_is_the_same_words(remote_app, loaded_model):
    body = {"category": "law", "index": 3, "shots": 0, "max_tokens": 24}
    local = app_with_model({"PAGE_RENDER_BUDGET_S": 0}, loaded_model)

    def written(app):
        answer = app.test_client().post("/api/mmlu-pro/generate", json=body, headers=ORIGIN)
        assert answer.status_code == 200, answer.get_data(as_text=True)
        lines = [json.loads(line) for line in answer.get_data(as_text=True).splitlines() if line.strip()]
        return "".join(line.get("text", "") for line in lines), lines[-1]

    (text, last), (expected, expected_last) = written(remote_app), written(local)
    assert text == expected and last.get("tokens") == expected_last.get("tokens")


def test_the_web_process_imports_no_torch(model_server):
    code = ("import json, os, sys; from engine import create_app; app = create_app({'MODEL_SERVER_URL': "
            "os.environ['URL']}); c = app.test_client(); a = c.post('/api/score', json={'subject': 'astronomy', "
            "'split': 'test', 'index': 0, 'shots': 0}, headers={'Origin': 'http://localhost'}); "
            "print(json.dumps([a.status_code, 'torch' in sys.modules, 'transformers' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PAGE_RENDER_BUDGET_S": "0", "URL": model_server})
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [200, False, False], done.stderr[-2000:]


def test_the_client_tokenises_here_with_the_servers_own_tokenizer(model_server, mmlu_data):
    """The site encodes with the model server's tokenizer file in its own process, and gets the server's
    own tokens for real prompts of every shape, after one /tokenize call (the probe's check)."""
    from benchmarks.mmlu import prompt

    client = ModelClient(model_server)
    asked = []
    ask = client._call
    client._call = lambda path, *args: asked.append(path) or ask(path, *args)
    texts = [TOKENIZER_PROBE, " ", "\n\n\n", "<|im_start|>user\nhi<|im_end|>\n", "é ☃ 中文 🙂"]
    for subject in ("astronomy", "high_school_european_history", "college_mathematics"):
        shots = mmlu_data.questions(subject, "dev")[:5]
        for q in mmlu_data.questions(subject, "test")[:3]:
            text = prompt.build_prompt(subject, q.question, q.choices, shots)
            texts += [text, text + " A", text + " D"]
    here = [client.encode(text) for text in texts]
    assert client.local_tokenizer() is not None and asked == ["/tokenize"]
    there = [ask("/tokenize", {"prompt": text, "add_special_tokens": False})["tokens"] for text in texts]
    assert here == there


@pytest.mark.parametrize("shift", [0, 1])
def test_a_tokenizer_file_is_used_only_if_it_encodes_as_the_server(shift):
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = Tokenizer(models.WordLevel({"[UNK]": 0, "the": 1, "are": 2, "A": 3, "Answer": 4, ":": 5},
                                       unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    fake = FakeServer(tokenizer=words, shift=shift)
    try:
        client = ModelClient(fake.url)
        tokens = [client.encode(text) for text in ("the are", "Answer: A", "the the")]
    finally:
        fake.stop()
    if shift:  # the file encodes otherwise: every text through /tokenize, its tokens as the server gives them
        assert client.local_tokenizer() is None and fake.tokenized == [TOKENIZER_PROBE, "the are", "Answer: A", "the the"]
        assert tokens == [[2, 3], [5, 6, 4], [2, 2]]
    else:
        assert client.local_tokenizer() is not None and fake.tokenized == [TOKENIZER_PROBE]
        assert tokens == [[1, 2], [4, 5, 3], [1, 1]]


# -- faults ---------------------------------------------------------------------------------------------
def post(base: str, path: str, body: dict, timeout: float = 120, source: str | None = None):
    """POST JSON; ``source``: another loopback address to send from (another reader, for the site's
    per-reader shares), e.g. "127.0.0.2"."""
    if source is None:
        request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", "Origin": base})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read()), answer.headers
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read()), error.headers
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(base)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=timeout, source_address=(source, 0))
    try:
        connection.request("POST", path, body=json.dumps(body),
                           headers={"Content-Type": "application/json", "Origin": base})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read()), answer.headers
    finally:
        connection.close()


QUESTION = {"subject": "astronomy", "split": "test", "index": 1, "shots": 0}


def test_the_model_server_killed_under_load_comes_back():
    """app.py with its own model server (no MODEL_SERVER_URL): SIGKILL the server while questions are
    being scored; the pages answer 200 throughout, live requests get 503 + Retry-After (or their
    answer), and once the server is back the next question is scored."""
    assert "MODEL_SERVER_URL" not in os.environ
    with running_server(threads=12, env={"SCORER_THREADS": "1", "PAGE_RENDER_BUDGET_S": "0"}) as server:
        base = server.url
        assert post(base, "/api/score", QUESTION)[0] == 200  # the model server is up
        children = subprocess.run(["pgrep", "-P", str(server.pid), "-f", "livescoring serve"], capture_output=True,
                                  text=True).stdout.split()
        assert len(children) == 1
        answers = []
        load = [threading.Thread(target=lambda i=i: answers.append(post(base, "/api/score", {**QUESTION, "index": i})))
                for i in range(2, 6)]
        for thread in load:
            thread.start()
        time.sleep(0.5)
        os.kill(int(children[0]), signal.SIGKILL)
        with urllib.request.urlopen(base + "/mmlu/", timeout=30) as page:
            assert page.status == 200
        with urllib.request.urlopen(base + "/api/model", timeout=30) as state:  # what the live forms show
            state = json.loads(state.read())
        assert state["state"] == "loading" and state["restarting"] and "restarting" in state["message"], state
        # Another reader (this one has the load's questions in flight, its share of the queue full):
        status, body, headers = post(base, "/api/score", QUESTION, source="127.0.0.2")
        assert status == 503 and headers["Retry-After"] and "restarting" in body["error"], body
        for thread in load:
            thread.join(120)
        # Each its answer, the restart's 503, or one reader's share of the queue (429): never a 500 or a hang.
        assert len(answers) == 4 and all(status in (200, 429, 503) for status, _, _ in answers), [a[:2] for a in answers]
        deadline = time.monotonic() + 120
        while (status := post(base, "/api/score", QUESTION)[0]) != 200 and time.monotonic() < deadline:
            time.sleep(1)
        assert status == 200


@pytest.fixture
def silent_server():
    """A server that accepts connections and never answers (a hung model server)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_a_model_server_that_cannot_be_reached_or_never_answers(silent_server):
    closed = create_app({"TESTING": True, "MODEL_SERVER_URL": f"http://127.0.0.1:{free_port()}",
                         "SCORER_TIMEOUT_S": 3, "PAGE_RENDER_BUDGET_S": 0})
    assert closed.test_client().get("/mmlu/").status_code == 200
    started = time.monotonic()
    status, body, _ = score(closed, QUESTION)
    assert status == 503 and "does not answer" in body["error"] and time.monotonic() - started < 10, body
    hung = create_app({"TESTING": True, "MODEL_SERVER_URL": silent_server, "SCORER_TIMEOUT_S": 3,
                       "PAGE_RENDER_BUDGET_S": 0})
    status, body, _ = score(hung, QUESTION)
    assert status in (503, 504) and body["error"], body
    assert hung.test_client().get("/api/model").get_json()["state"] != "ready"


def test_a_server_without_prompt_logprobs_is_refused_not_scored():
    fake = FakeServer(echo=False)  # llama.cpp's server's way: values for the tokens it writes, none for the prompt
    try:
        app = create_app({"TESTING": True, "MODEL_SERVER_URL": fake.url, "PAGE_RENDER_BUDGET_S": 0})
        status, body, _ = score(app, QUESTION)
    finally:
        fake.stop()
    assert status == 503 and "prompt log-probabilities" in body["error"], body
    assert "probabilities" not in body


def test_a_letter_score_has_the_server_read_the_chain_of_thought_ahead():
    from benchmarks.mmlu_pro import prompt
    from benchmarks.mmlu_pro.server.reader import MMLUProData
    from livescoring.remote import prefix_key

    fake = FakeServer()
    try:
        app = create_app({"TESTING": True, "MODEL_SERVER_URL": fake.url, "PAGE_RENDER_BUDGET_S": 0})
        answer = app.test_client().post("/api/mmlu-pro/score", json={"category": "history", "index": 0, "shots": 2},
                                        headers=ORIGIN)
        assert answer.status_code == 200, answer.get_json()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(body.get("stream") for body in fake.bodies):
            time.sleep(0.05)
        ahead = [(body, key) for body, key in zip(fake.bodies, fake.keys, strict=True) if body.get("stream")]
    finally:
        fake.stop()
    data = MMLUProData(REPO_ROOT.parent / "shared" / "data" / "mmlu-pro")
    q = data.in_category("history", "test")[0]
    parts = prompt.cot_prompt_parts(q.category, q.question, q.options, data.shots("history", 2))
    assert len(ahead) == 1, fake.bodies
    body, key = ahead[0]
    assert bytes(body["prompt"][0]).decode() == "".join(part.text for part in parts)  # the fake's tokens are bytes
    assert body["max_tokens"] == 1
    assert key == prefix_key("".join(part.text for part in parts if part.kind in ("header", "shot")))
