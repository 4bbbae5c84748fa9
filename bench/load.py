"""Load benchmark against the production server on 127.0.0.1 (bounded; stops by itself).

    python bench/load.py                 # pages: 64 connections, 30 s each; scoring: 16 clients, 30 s
    python bench/load.py --seconds 10    # shorter

Pages and the math API are driven by wrk (Debian package `wrk`); live scoring by 16 Python
client threads, each sending one question after another, while one more client keeps reading
/mmlu/ so we see whether pages stay fast while the model is busy.
"""
from __future__ import annotations

import argparse
import http.client
import json
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import hardware, rss_mib, running_server  # noqa: E402

GET_TARGETS = [
    "/mmlu/",
    "/embed/mmlu/chance-explorer?n=100&score=0.3",
    "/api/explainers/standard_error?p=0.25&n=100",
]
SCORE_BODY = {"subject": "high_school_geography", "split": "test", "index": 0, "shots": 0}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(url: str, seconds: int, connections: int) -> str:
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency",
                          "-H", "Accept-Encoding: gzip", url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = _ms(re.search(r"\s50%\s+(\S+)", out).group(1))
    p99 = _ms(re.search(r"\s99%\s+(\S+)", out).group(1))
    errors = 0
    if m := re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        errors += int(m.group(1))
    if m := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out):
        errors += sum(int(x) for x in m.groups())
    return f"{rps:8.0f} req/s   p50 {p50:7.1f} ms   p99 {p99:7.1f} ms   errors {errors}"


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else (values or [float("nan")])[0]


def scoring_load(base: str, seconds: int, clients: int, pid: int) -> None:
    host = urlparse(base)
    stop_at = time.monotonic() + seconds
    lock = threading.Lock()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    retry_after_missing = 0
    page_latencies: list[float] = []
    peak_rss = [rss_mib(pid)]

    def scorer():
        nonlocal retry_after_missing
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=120)
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            conn.request("POST", "/api/score", json.dumps(SCORE_BODY), {"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                statuses[response.status] = statuses.get(response.status, 0) + 1
                if response.status == 200:
                    latencies.append(elapsed)
                if response.status == 429:
                    retry_after_missing += response.getheader("Retry-After") is None
            if response.status == 429:
                time.sleep(0.2)

    def reader():
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            conn.request("GET", "/mmlu/")
            conn.getresponse().read()
            page_latencies.append((time.perf_counter() - started) * 1000)
            peak_rss.append(rss_mib(pid))
            time.sleep(0.05)

    threads = [threading.Thread(target=scorer) for _ in range(clients)] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = statuses.get(200, 0)
    print(f"  scoring, {clients} clients, {seconds} s: {done / seconds:.2f} answered questions/s, "
          f"p50 {percentile(latencies, 50):.0f} ms, p99 {percentile(latencies, 99):.0f} ms; "
          f"statuses {dict(sorted(statuses.items()))}; "
          f"429 without Retry-After: {retry_after_missing}")
    print(f"  /mmlu/ while scoring: p50 {percentile(page_latencies, 50):.1f} ms, p99 {percentile(page_latencies, 99):.1f} ms "
          f"over {len(page_latencies)} requests; server RSS peak {max(peak_rss):.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install wrk")
    print(f"hardware: {hardware()}")
    with running_server() as server:
        base, proc = server.url, server.process
        print(f"  server log: {server.log_path}")
        for path in GET_TARGETS:
            run_wrk(base + path, 2, 4)  # warm caches
            figures = run_wrk(base + path, args.seconds, args.connections)
            print(f"  {path:45s} {figures}  ({args.connections} connections, {args.seconds} s)")
        print(f"  server RSS after page load: {rss_mib(proc.pid):.0f} MiB")
        warm = http.client.HTTPConnection(urlparse(base).hostname, urlparse(base).port, timeout=300)
        warm.request("POST", "/api/score", json.dumps(SCORE_BODY), {"Content-Type": "application/json"})
        first = warm.getresponse()
        first.read()
        if first.status != 200:
            print(f"  scoring unavailable (status {first.status}); skipped")
            return
        scoring_load(base, args.seconds, args.clients, proc.pid)


if __name__ == "__main__":
    main()
