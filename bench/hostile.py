"""The long attacks of issue 11 against the real server, with what they cost now.

    python3 bench/hostile.py [--scoring | --vendor | --memory]

1. static traversal: 8 requests for /static/css/../js/../../../../<a 100 MB .so> (sent as-is);
2. 2,000 spellings of one static file, then 2,000 of one vendor file (issue 41:
   /vendor/@codemirror/view@<version>/dist/<N>/../index.js; before its fix, one 1.1 MiB copy each;
   --vendor runs this alone);
3. 1,200 widget URLs of 30 KB each (the page store's keys);
4. 8 clients posting ngram_overlap with n = 2,500 for 10 s while a reader fetches /mmlu/;
5. with --scoring (loads the real model): 4 clients sending the scoring hog (a 4,000-character
   question, four 1,000-character choices, 5 shots, method option) for 30 s while one client
   scores real questions 0-shot.
6. with --memory (loads the real model): the server's resident memory through passes of
   long-prompt requests (issue 26: it grew from 713 MiB to 6.7 GB): each pass, four readers at
   once each ask for an MMLU-Pro chain of thought at 5 shots (8 new tokens) and score
   high_school_european_history's longest questions at 5 shots (method option). --arenas N
   starts the server with MALLOC_ARENA_MAX=N (app.py's own default is 2), to compare. The peak is
   the server's VmHWM since the model loaded (and the polled resident memory, whichever is higher).
Printed: statuses, time, the server's resident memory, the reader's latencies; the hardware.
"""
from __future__ import annotations

import argparse
import http.client
import json
import re
import statistics
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

from common import hardware, rss_mib, running_server

BIG_LIBRARY = next((p for p in (Path("/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1"),) if p.exists()), Path("/etc/hostname"))
HOG = {"subject": "astronomy", "question": "q" * 4000, "choices": ["c" * 1000] * 4, "shots": 5, "method": "option"}


def request(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, float]:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status, time.perf_counter() - started


def for_seconds(seconds: float, work) -> list:
    results, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        results.append(work())
    return results


def in_threads(count: int, seconds: float, work) -> list:
    results: list = []
    threads = [threading.Thread(target=lambda: results.extend(for_seconds(seconds, work))) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    return (f"p50 {statistics.median(ordered) * 1000:.1f} ms, "
            f"p99 {ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scoring", action="store_true", help="also the scoring hog (loads the real model)")
    parser.add_argument("--memory", action="store_true", help="only the long-prompt memory passes (loads the model)")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--arenas", type=int, default=None, help="MALLOC_ARENA_MAX for the server")
    parser.add_argument("--vendor", action="store_true", help="only the 2,000 vendor spellings")
    args = parser.parse_args()
    print(f"hardware: {hardware()}")
    if args.memory:
        memory_passes(args.passes, args.arenas)
        return
    if args.vendor:
        with running_server(threads=16) as server:
            vendor_spellings(int(server.url.rsplit(":", 1)[1]), server.pid)
        return
    env = {"SCORER_LOAD_AT_START": "1", "SCORER_THREADS": "1"} if args.scoring else {}
    with running_server(threads=16, env=env) as server:
        port, pid = int(server.url.rsplit(":", 1)[1]), server.pid
        request(port, "GET", "/mmlu/")
        print(f"server memory after /mmlu/: {rss_mib(pid):.0f} MiB")

        depth = "../" * 8
        results = [request(port, "GET", f"/static/css/../js/{depth}{BIG_LIBRARY}") for _ in range(8)]
        print(f"1. traversal to {BIG_LIBRARY.name} ({BIG_LIBRARY.stat().st_size / 2**20:.0f} MiB), 8 requests: "
              f"{dict(Counter(s for s, _ in results))}, {sum(t for _, t in results) * 1000:.0f} ms in all, "
              f"server memory {rss_mib(pid):.0f} MiB")

        results = [request(port, "GET", "/static/" + "css/./" * (i % 50 + 1) + "site.css?s=" + str(i)) for i in range(2000)]
        print(f"2. 2,000 spellings of one file: {dict(Counter(s for s, _ in results))}, server memory {rss_mib(pid):.0f} MiB")
        vendor_spellings(port, pid)

        results = [request(port, "GET", f"/embed/mmlu/chance-explorer?n=100&pad{i}=" + "x" * 30_000) for i in range(1200)]
        print(f"3. 1,200 widget URLs of 30 KB: {dict(Counter(s for s, _ in results))}, "
              f"server memory {rss_mib(pid):.0f} MiB (page store bound 32 MiB, keys included)")

        words = " ".join(f"w{i % 50}" for i in range(5000))
        quiet = for_seconds(5, lambda: request(port, "GET", "/mmlu/")[1])
        attack: list = []
        flood = threading.Thread(target=lambda: attack.extend(in_threads(8, 10, lambda: request(
            port, "POST", "/api/explainers/ngram_overlap", {"text": words, "reference": words, "n": 2500}))))
        flood.start()
        loud = for_seconds(9, lambda: request(port, "GET", "/mmlu/")[1])
        flood.join()
        print(f"4. ngram_overlap n = 2,500, 8 clients: {dict(Counter(s for s, _ in attack))} "
              f"({len(attack)} requests); reader on /mmlu/ alone {ms(quiet)}, during the flood {ms(loud)}")

        if args.scoring:
            while json.loads(model_state(port))["state"] in ("not loaded", "loading"):
                time.sleep(1)
            hogs: list = []
            flood = threading.Thread(target=lambda: hogs.extend(in_threads(4, 30, lambda: request(
                port, "POST", "/api/score", HOG))))
            flood.start()
            index = iter(range(10_000))
            normal = for_seconds(28, lambda: request(port, "POST", "/api/score", {
                "subject": "astronomy", "split": "test", "index": next(index) % 152, "shots": 0}))
            flood.join()
            print(f"5. scoring hog, 4 clients for 30 s: {dict(Counter(s for s, _ in hogs))} ({len(hogs)} requests); "
                  f"a real-question client meanwhile: {dict(Counter(s for s, _ in normal))}, "
                  f"{ms([t for s, t in normal if s == 200])}")


def vendor_spellings(port: int, pid: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/vendor/editor.js")  # names the installed version of each package
    response = connection.getresponse()
    entry = response.read().decode()
    connection.close()
    view = re.search(r"/vendor/@codemirror/view@[^/]+/", entry)
    if response.status != 200 or view is None:
        print(f"2b. no vendor files on this server ({response.status}): run npm ci")
        return
    status, _ = request(port, "GET", view.group(0) + "dist/index.js")
    before = rss_mib(pid)
    started = time.perf_counter()
    results = [request(port, "GET", f"{view.group(0)}dist/{i}/../index.js") for i in range(2000)]
    print(f"2b. 2,000 spellings of one vendor file (its one spelling: {status}): {dict(Counter(s for s, _ in results))} "
          f"in {time.perf_counter() - started:.1f} s, server memory {before:.0f} -> {rss_mib(pid):.0f} MiB")


LONG_PROMPTS = [("history", 0), ("law", 0), ("history", 3), ("law", 5)]  # MMLU-Pro's longest categories
EUROPEAN_HISTORY = [2, 12, 101, 150]  # high_school_european_history test questions with long passages


def memory_passes(passes: int, arenas: int | None) -> None:
    # A long timeout: on a busy machine the passes would end in 504s, and the work they measure with them.
    env = {"SCORER_LOAD_AT_START": "1", "SCORER_THREADS": "1", "TRUSTED_PROXIES": "1", "SCORER_TIMEOUT_S": "900"}
    if arenas is not None:
        env["MALLOC_ARENA_MAX"] = str(arenas)
    with running_server(threads=16, env=env) as server:
        port, pid = int(server.url.rsplit(":", 1)[1]), server.pid
        while json.loads(model_state(port))["state"] in ("not loaded", "loading"):
            time.sleep(1)
        # The model runs in app.py's child, the model server (issue 36): its memory is the one that grows.
        children = subprocess.run(["pgrep", "-P", str(pid), "-f", "livescoring serve"], capture_output=True,
                                  text=True).stdout.split()
        site, pid = pid, int(children[0]) if children else pid
        print(f"6. MALLOC_ARENA_MAX={arenas if arenas is not None else '2 (app.py)'}; model server memory with the "
              f"model loaded: {rss_mib(pid):.0f} MiB (site process {rss_mib(site):.0f} MiB)")
        peak, site_peak = rss_mib(pid), rss_mib(site)
        reset_high_water(pid)  # the passes' peak, not the model's loading
        reset_high_water(site)
        began = time.monotonic()

        def reader(n: int, statuses: list) -> None:
            category, index = LONG_PROMPTS[n]
            statuses.append(forwarded(port, n, "/api/mmlu-pro/generate",
                                      {"category": category, "index": index, "shots": 5, "max_tokens": 8}))
            statuses.append(forwarded(port, n, "/api/score", {"subject": "high_school_european_history", "split": "test",
                                                              "index": EUROPEAN_HISTORY[n], "shots": 5,
                                                              "method": "option"}))
        for number in range(1, passes + 1):
            statuses: list = []
            started = time.monotonic()
            threads = [threading.Thread(target=reader, args=(n, statuses)) for n in range(4)]
            for thread in threads:
                thread.start()
            while any(thread.is_alive() for thread in threads):
                peak = max(peak, rss_mib(pid))
                time.sleep(0.2)
            peak = max(peak, rss_mib(pid), high_water_mib(pid))
            site_peak = max(site_peak, high_water_mib(site))
            print(f"   pass {number}: {dict(Counter(statuses))} in {time.monotonic() - started:.0f} s "
                  f"({time.monotonic() - began:.0f} s in all); model server memory {rss_mib(pid):.0f} MiB now, "
                  f"{peak:.0f} MiB at most so far; site process {rss_mib(site):.0f} MiB, {site_peak:.0f} at most",
                  flush=True)


def reset_high_water(pid: int) -> None:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # Linux: VmHWM starts again from VmRSS
    except OSError:
        pass


def high_water_mib(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), which polling can miss; 0 if unknown."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def forwarded(port: int, reader: int, path: str, body: dict) -> int:
    """One request as reader number ``reader`` (its own address, as nginx would forward it)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    connection.request("POST", path, body=json.dumps(body),
                       headers={"Content-Type": "application/json", "X-Forwarded-For": f"192.0.2.{reader + 1}"})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status


def model_state(port: int) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/api/model")
    return connection.getresponse().read().decode()


if __name__ == "__main__":
    main()
