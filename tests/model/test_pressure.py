"""Live scoring under pressure, on the real production server with the real model.

16 clients send questions as fast as they are answered for a bounded time (the 30-second run
is bench/load.py). The server must not crash, must answer the excess with 429 and a
Retry-After, keep its memory bounded, and keep serving pages while the model is busy.
"""
from __future__ import annotations

import http.client
import json
import re
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tools.launcher import rss_mib

pytestmark = [pytest.mark.model, pytest.mark.slow]

CLIENTS = 16
SECONDS = 12
QUESTION = {"subject": "high_school_geography", "split": "test", "index": 3, "shots": 0}


def server_pid(base: str) -> int:
    """The pid of the process listening on the server's port (the live_server subprocess)."""
    port = urlparse(base).port
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                inode = fields[9]
    assert inode, "listening socket not found"
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if any(f"socket:[{inode}]" == str(fd.readlink()) for fd in (proc / "fd").iterdir()):
                    return int(proc.name)
            except OSError:
                continue
    raise AssertionError("server process not found")


def post_score(conn: http.client.HTTPConnection):
    conn.request("POST", "/api/score", json.dumps(QUESTION), {"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, response.getheader("Retry-After"), json.loads(response.read())


# One worker runs both tests: the second asks nothing of the server that the first has not started.
@pytest.mark.xdist_group("live_server_pressure")
def test_the_web_process_reads_mmlu_pro_without_pyarrow_or_numpy(live_server):
    """app.py warmed /mmlu-pro/ (its category sizes come from the Parquet file) and serves a question:
    its process maps no pyarrow or numpy library, which held about 110 MiB there (issue 36); the
    reader's child process (benchmarks/mmlu_pro/server/reader.py) reads the files."""
    host = urlparse(live_server)
    conn = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
    conn.request("GET", "/api/mmlu-pro/questions/math?index=0")
    response = conn.getresponse()
    assert response.status == 200 and json.loads(response.read())["category"] == "math"
    maps = Path(f"/proc/{server_pid(live_server)}/maps").read_text()
    assert not re.search(r"/(pyarrow|numpy)[/.]", maps), "the site's process loaded pyarrow or numpy"


@pytest.mark.xdist_group("live_server_pressure")
def test_sixteen_scoring_clients_get_answers_or_429_and_pages_keep_working(live_server):
    host = urlparse(live_server)
    warm = http.client.HTTPConnection(host.hostname, host.port, timeout=600)
    status, _, body = post_score(warm)  # loads the model (converted once per machine, then cached)
    assert status == 200, body
    pid = server_pid(live_server)
    rss_before = rss_mib(pid)

    statuses: list[int] = []
    missing_retry_after: list[dict] = []
    errors: list[str] = []
    page_statuses: list[int] = []
    peak_rss = [rss_before]
    stop_at = time.monotonic() + SECONDS
    lock = threading.Lock()

    def scoring_client():
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=120)
        try:
            while time.monotonic() < stop_at:
                status, retry_after, body = post_score(conn)
                with lock:
                    statuses.append(status)
                    if status == 429 and not retry_after:
                        missing_retry_after.append(body)
                if status == 429:
                    time.sleep(0.1)
        except Exception as error:  # a dropped connection is a failure to report, not to hide
            errors.append(repr(error))

    def page_reader():
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
        while time.monotonic() < stop_at:
            conn.request("GET", "/mmlu/")
            response = conn.getresponse()
            response.read()
            page_statuses.append(response.status)
            peak_rss.append(rss_mib(pid))
            time.sleep(0.1)

    threads = [threading.Thread(target=scoring_client) for _ in range(CLIENTS)]
    threads.append(threading.Thread(target=page_reader))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 180)

    assert not errors, errors
    assert statuses.count(200) >= 1
    assert statuses.count(429) >= 1, "16 clients against a queue of 8 must overflow it"
    assert set(statuses) <= {200, 429}, f"unexpected statuses: {sorted(set(statuses))}"
    assert not missing_retry_after
    assert page_statuses and set(page_statuses) == {200}
    # Memory stays bounded: the queue holds at most a few requests, nothing accumulates per request.
    assert max(peak_rss) - rss_before < 400, f"RSS grew from {rss_before:.0f} to {max(peak_rss):.0f} MiB"
    # And the server is still healthy afterwards (on a new connection: the server may have closed the
    # first one, idle through the run).
    warm.close()
    status, _, body = post_score(warm)
    assert status == 200 and abs(sum(body["probabilities"].values()) - 1) < 1e-6
