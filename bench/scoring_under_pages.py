"""Live scoring while many readers fetch pages (issue 26, item 11: scoring slowed about 8x under 16 page clients).

    python3 bench/scoring_under_pages.py                 # 20 s alone, then 20 s beside 16 page clients
    python3 bench/scoring_under_pages.py --seconds 10 --clients 8

One client scores real 0-shot questions one after another (POST /api/score) against the
production server (python3 app.py, the model loaded at start, SCORER_THREADS as configured), first
alone, then while ``--clients`` threads fetch /mmlu/ (a cached page) one request after another.
Prints the scoring latency both ways (p50, p99), the ratio, and the pages served. The clients run in
this process, on the same cores as the server, as the issue's attacker did.
"""
from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import hardware, running_server  # noqa: E402

SUBJECT = "astronomy"


def score(port: int, index: int) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    body = {"subject": SUBJECT, "split": "test", "index": index % 150, "shots": 0}
    connection.request("POST", "/api/score", body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    connection.close()
    assert response.status == 200, response.status
    return time.perf_counter() - started


def scoring_for(port: int, seconds: float) -> list[float]:
    latencies, deadline, index = [], time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        latencies.append(score(port, index))
        index += 1
    return latencies


def pages(port: int, stop: threading.Event, served: list) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while not stop.is_set():
        connection.request("GET", "/mmlu/", headers={"Accept-Encoding": "gzip"})
        response = connection.getresponse()
        response.read()
        served.append(response.status)


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    return (f"{len(ordered)} questions, p50 {statistics.median(ordered) * 1000:.0f} ms, "
            f"p99 {ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    print(f"hardware: {hardware()}")
    with running_server(env={"SCORER_LOAD_AT_START": "1"}, timeout=600) as server:
        port = int(server.url.rsplit(":", 1)[1])
        for index in range(5):  # the model warm, the subject's prefix cached
            score(port, index)
        alone = scoring_for(port, args.seconds)
        print(f"scoring alone: {summary(alone)}")
        stop, served = threading.Event(), []
        threads = [threading.Thread(target=pages, args=(port, stop, served), daemon=True) for _ in range(args.clients)]
        for thread in threads:
            thread.start()
        beside = scoring_for(port, args.seconds)
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        print(f"scoring beside {args.clients} page clients: {summary(beside)}; "
              f"{len(served):,} pages served ({len(served) / args.seconds:.0f}/s)")
        print(f"ratio: scoring p50 {statistics.median(beside) / statistics.median(alone):.1f}x slower")


if __name__ == "__main__":
    main()
