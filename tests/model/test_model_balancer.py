"""Two model servers behind deploy/'s nginx balancer, on loopback (issue 36: growing past one machine).

Both servers run the real model (one torch thread each) with an API key; the balancer is
deploy/nginx-model.conf.template rendered for them. Its X-Model-Server header names the server that
answered, and every server tried before it ("A, B" after a failover).

* The same prefix key always meets the same server; different keys spread over both.
* The API key passes through nginx to the servers, which check it; a refusal is not failed over.
* A stream passes through as it is written.
* One server killed (SIGKILL) in the middle of a run: its requests in flight are resent to the other
  (POSTs included), later ones go there at once; every request is answered, with the same numbers.
"""
from __future__ import annotations

import http.client
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest

from deploy.local import NGINX, model_balancer
from tools.launcher import running_model_server

pytestmark = [pytest.mark.model, pytest.mark.slow,  # slow: two model server processes (about 10 s to start)
              pytest.mark.xdist_group("model_server"),
              pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed (tests/run.sh installs it)")]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
KEY = "balancer-test-key"
KEYS = [f"mmlu/subject-{n}/5-shot" for n in range(16)]  # all on one server by chance: 2 in 65,536
TOLERANCE = 1e-6  # the same request on either server: the same model, the same arithmetic


def call(port: int, method: str, path: str, body: dict | None = None, prefix: str = "", key: str | None = KEY,
         timeout: float = 120) -> tuple[int, str, dict]:
    """(status, X-Model-Server, JSON answer) of one request through the balancer."""
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    if prefix:
        headers["X-Prefix-Key"] = prefix
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        data = response.read()
        try:
            body = json.loads(data)
        except ValueError:  # nginx's own error pages are HTML: keep them readable in a failure
            body = {"not_json": data[:300].decode(errors="replace")}
        return response.status, response.headers.get("X-Model-Server", ""), body
    finally:
        connection.close()


def echo(prefix: str) -> dict:
    """An lm-eval style log-likelihood request whose prompt begins with what its key names."""
    return {"prompt": f"The following are questions about {prefix}.\nQuestion: 2 + 2 = ?\nAnswer: 4",
            "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}


LONG = {"prompt": "1, 2, 3, 4, 5, 6, 7, 8,", "max_tokens": 48, "temperature": 0}  # counts on: no early end of text


@pytest.fixture(scope="module")
def servers():
    """Two model servers, started side by side (each loads the converted model in a few seconds)."""
    def start(name: str):
        manager = running_model_server(args=("--threads", "1", "--api-key", KEY),
                                       log_path=ARTIFACTS / f"model-balancer-{name}.log")
        return manager, manager.__enter__()

    with ExitStack() as stack, ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(start, name) for name in ("a", "b")]
        started = []
        for future in futures:
            try:
                manager, server = future.result()
            except BaseException:
                continue  # its own manager stopped it; the other is stopped below, then the test fails
            stack.push(manager.__exit__)
            started.append(server)
        assert len(started) == 2, "a model server did not start: see tests/artifacts/model-balancer-*.log"
        yield started


@pytest.fixture()
def balancer(servers, tmp_path):
    ports = [int(server.url.rsplit(":", 1)[1]) for server in servers]
    with model_balancer(ports, tmp_path) as port:
        yield port, [f"127.0.0.1:{p}" for p in ports]


def test_a_prefix_key_always_meets_the_same_server_and_keys_spread(balancer):
    port, addresses = balancer
    seen: dict[str, set[str]] = {}
    for _ in range(2):
        for prefix in KEYS:
            status, server, _ = call(port, "POST", "/v1/completions", echo(prefix), prefix)
            assert status == 200 and server in addresses, (status, server)
            seen.setdefault(prefix, set()).add(server)
    assert all(len(where) == 1 for where in seen.values()), seen
    assert {next(iter(where)) for where in seen.values()} == set(addresses)  # both take a share
    # Requests without a key (the tokenizer's, /v1/models) spread over both at random.
    keyless = {call(port, "GET", "/v1/models")[1] for _ in range(20)}
    assert keyless == set(addresses), keyless


def test_the_api_key_passes_through_to_the_servers(balancer):
    port, addresses = balancer
    for key in (None, "wrong"):
        status, server, body = call(port, "POST", "/v1/completions", echo("keys"), "keys", key=key)
        assert status == 401 and "Bearer" in body["error"]["message"]
        assert server in addresses  # the server's refusal, answered once: not a failure to resend
    assert call(port, "POST", "/tokenize", {"prompt": "hello"}, "keys")[0] == 200
    # A route no model server of ours has (vLLM's /pause takes no key) stops at the balancer.
    status, server, body = call(port, "POST", "/pause", {})
    assert status == 404 and server == "" and body["error"]["code"] == 404


def test_a_stream_passes_through_as_it_is_written(balancer):
    port, _ = balancer
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", "/v1/completions", body=json.dumps({**LONG, "stream": True}),
                       headers={"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    response = connection.getresponse()
    assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
    arrivals, events = [], []
    for line in response:  # http.client reads the chunked body line by line as it comes
        if line.startswith(b"data: "):
            arrivals.append(time.monotonic())
            events.append(line[6:].strip())
    connection.close()
    assert events[-1] == b"[DONE]" and len(events) > 10
    assert json.loads(events[-2])["choices"][0]["finish_reason"] == "length"
    # 48 tokens on one torch thread take a while: buffered, they would arrive together at the end.
    assert arrivals[-1] - arrivals[0] > 0.2, arrivals[-1] - arrivals[0]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_server_killed_mid_run_loses_no_request(balancer, servers):
    """Last in this module: it kills one of the module's servers."""
    port, addresses = balancer
    keys = KEYS[:8]
    reference = {prefix: call(port, "POST", "/v1/completions", echo(prefix), prefix) for prefix in keys}
    victim_address = reference[keys[0]][1]
    victim = servers[addresses.index(victim_address)]
    survivor = next(a for a in addresses if a != victim_address)

    def read(round_: int) -> list[tuple[str, int, str, dict]]:
        answers = []
        for prefix in keys[round_::4]:
            status, server, body = call(port, "POST", "/v1/completions", echo(prefix), prefix)
            answers.append((prefix, status, server, body))
        return answers

    with ThreadPoolExecutor(4) as pool:
        # A generation of 48 tokens on the server about to die, and readers of every key beside it.
        idle = cpu_seconds(victim.pid)
        long = pool.submit(call, port, "POST", "/v1/completions", LONG, keys[0])
        readers = [pool.submit(read, n) for n in range(4)]
        deadline = time.monotonic() + 30
        while cpu_seconds(victim.pid) - idle < 0.05 and time.monotonic() < deadline:
            time.sleep(0.01)  # until the server is at work: the generation is in flight there
        victim.process.kill()
        victim.process.wait(timeout=10)
        status, server, body = long.result(timeout=300)
        answers = [answer for reader in readers for answer in reader.result(timeout=300)]
    # The generation was in flight on the server that died: nginx resent the POST to the other one,
    # which wrote it whole.
    assert status == 200 and server == f"{victim_address}, {survivor}", (status, server)
    assert body["choices"][0]["finish_reason"] == "length" and body["usage"]["completion_tokens"] == LONG["max_tokens"]
    assert len(answers) == len(keys)
    for prefix, status, server, body in answers:
        assert status == 200, (prefix, status, body)
        assert server.split(", ")[-1] in addresses
        # The same numbers from either server.
        got, expected = body["choices"][0]["logprobs"], reference[prefix][2]["choices"][0]["logprobs"]
        assert got["tokens"] == expected["tokens"]
        assert all(a == b or None not in (a, b) and abs(a - b) <= TOLERANCE  # the first is None on both
                   for a, b in zip(got["token_logprobs"], expected["token_logprobs"], strict=True)), prefix
    # Afterwards the dead server's keys are answered by the survivor.
    for prefix in (prefix for prefix in keys if reference[prefix][1] == victim_address):
        status, server, _ = call(port, "POST", "/v1/completions", echo(prefix), prefix)
        assert status == 200 and server.split(", ")[-1] == survivor, (prefix, server)
