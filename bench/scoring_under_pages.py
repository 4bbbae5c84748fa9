"""Live scoring while many readers fetch pages (issue 26, item 11: scoring slowed about 8x under 16 page
clients; issue 36: the model in a server of its own).

    python3 bench/scoring_under_pages.py                          # this checkout, 3 rounds
    python3 bench/scoring_under_pages.py --before main --rounds 4  # and the code at a git ref, interleaved
    python3 bench/scoring_under_pages.py --before c2f6552 --env SCORER_THREADS=1

One client scores real 0-shot questions one after another (POST /api/score) against the
production server (python3 app.py, the model loaded at start, SCORER_THREADS as configured): in
each round first alone, then while ``--clients`` threads fetch /mmlu/ one request after another,
then 5-shot questions alone, then the page clients alone (the model idle): each page's time is
kept, so pages beside a busy model are compared with pages beside an idle one. At the end, each
server's resident memory: the site's process and, where the model runs in a server of its own
(app.py's child), that one's.
With ``--before REF`` a second server runs the code at REF (exported with git archive) and the
rounds alternate between the two, so a machine shared with other work slows both alike. Prints each
variant's scoring p50 alone and beside the pages, their ratio, and the pages served per second.

The page clients run in a child process, on the same cores as the server, as the issue's attacker
did: in this process their threads would hold its GIL while the scoring client waits for an answer.
"""
from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO_ROOT, hardware, running_server  # noqa: E402

from tools.launcher import rss_mib  # noqa: E402

SUBJECT = "astronomy"
WARM_QUESTIONS = 5  # the model warm, the subject's prefix cached
WARM_FIRST = 100  # the warming questions' first index, past the measured ones: a question asked again may be
# answered from a cache (the model server keeps the last prompts' next-token distributions), never measured so
WARM_PAGES_S = 5.0  # pages fetched, unmeasured, before the first round: its first beside-pages phase ran
# slower than the later ones in most runs here, on either server
DATA_DIRS = {"MMLU_DATA_DIR": "mmlu", "MMLU_PRO_DATA_DIR": "mmlu-pro"}  # where an exported tree finds the data


def score(port: int, index: int, shots: int = 0) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = {"subject": SUBJECT, "split": "test", "index": index % 150, "shots": shots}
    connection.request("POST", "/api/score", body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    connection.close()
    assert response.status == 200, response.status
    return time.perf_counter() - started


def scoring_for(port: int, seconds: float, first: int, shots: int = 0) -> list[float]:
    """Questions scored back to back for ``seconds`` (at least two, so a slow phase still counts)."""
    latencies, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline or len(latencies) < 2:
        latencies.append(score(port, first + len(latencies), shots))
    return latencies


def fetch_pages(port: int, clients: int, stop, served, times) -> None:
    """In a child process: ``clients`` threads fetching /mmlu/ (gzip) until ``stop`` is set; each
    page's seconds go to ``times`` (a queue) at the end."""
    kept: list[float] = []

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while not stop.is_set():
            started = time.perf_counter()
            connection.request("GET", "/mmlu/", headers={"Accept-Encoding": "gzip"})
            response = connection.getresponse()
            response.read()
            kept.append(time.perf_counter() - started)
            with served.get_lock():
                served.value += 1

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    times.put(kept)


def scoring_beside_pages(port: int, seconds: float, first: int, clients: int,
                         scoring: bool = True) -> tuple[list[float], float, list[float]]:
    """Scoring latencies while the page clients run (none with ``scoring`` False: the pages alone),
    the pages they got per second, and each page's seconds."""
    stop, served, times = multiprocessing.Event(), multiprocessing.Value("i", 0), multiprocessing.Queue()
    pages = multiprocessing.Process(target=fetch_pages, args=(port, clients, stop, served, times), daemon=True)
    pages.start()
    time.sleep(0.5)  # every client connected and fetching
    before, started = served.value, time.monotonic()
    latencies = scoring_for(port, seconds, first) if scoring else time.sleep(seconds) or []
    rate = (served.value - before) / (time.monotonic() - started)
    stop.set()
    page_times = times.get(timeout=120)
    pages.join(timeout=120)
    return latencies, rate, page_times


def memory(pid: int) -> str:
    """The server's resident memory, and its model server child's where it has one."""
    children = subprocess.run(["pgrep", "-P", str(pid), "-f", "livescoring serve"], capture_output=True,
                              text=True).stdout.split()
    mine = f"site process {rss_mib(pid):.0f} MiB"
    return mine + "".join(f", model server {rss_mib(int(child)):.0f} MiB" for child in children)


@contextlib.contextmanager
def exported(ref: str):
    """The repository's files at ``ref`` in a temporary folder (git archive: committed files only)."""
    with tempfile.TemporaryDirectory(prefix="scoring-under-pages-") as folder:
        archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        yield Path(folder)


def p50_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10, help="of each phase (default 10)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--before", metavar="REF", help="also run the code at this git ref, round by round")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="for every server (repeatable), e.g. SCORER_THREADS=1")
    args = parser.parse_args()
    print(f"hardware: {hardware()}; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    shared_data = REPO_ROOT.parent / "shared" / "data"
    data_env = {name: os.environ.get(name, str(shared_data / folder)) for name, folder in DATA_DIRS.items()}
    settings = dict(pair.split("=", 1) for pair in args.env)
    if settings:
        print(f"every server with {settings}")
    with contextlib.ExitStack() as stack:
        variants = {"this checkout": REPO_ROOT}
        if args.before:
            variants[f"before ({args.before})"] = stack.enter_context(exported(args.before))
        ports, pids = {}, {}
        for name, root in variants.items():
            server = stack.enter_context(running_server(env={"SCORER_LOAD_AT_START": "1", **data_env, **settings},
                                                        timeout=600, root=root))
            ports[name] = int(server.url.rsplit(":", 1)[1])
            for index in range(WARM_QUESTIONS):
                score(ports[name], WARM_FIRST + index)
            scoring_beside_pages(ports[name], WARM_PAGES_S, WARM_FIRST + WARM_QUESTIONS, args.clients)
            scoring_for(ports[name], 1, WARM_FIRST, shots=5)  # the 5-shot prefix read once
            pids[name] = server.pid
        found = {name: {key: [] for key in ("alone", "beside", "five", "pages", "busy", "idle")} for name in variants}
        by_round: dict[str, list[dict[str, float]]] = {name: [] for name in variants}  # each phase's p50
        index = 0
        for round_number in range(1, args.rounds + 1):
            for name, port in ports.items():
                alone = scoring_for(port, args.seconds, index)
                beside, rate, busy = scoring_beside_pages(port, args.seconds, index + len(alone), args.clients)
                five = scoring_for(port, args.seconds, index, shots=5)
                _, _, idle = scoring_beside_pages(port, args.seconds, 0, args.clients, scoring=False)
                index += len(alone) + len(beside)
                for key, values in (("alone", alone), ("beside", beside), ("five", five), ("pages", [rate]),
                                    ("busy", busy), ("idle", idle)):
                    found[name][key].extend(values)
                by_round[name].append({key: statistics.median(values) for key, values in (
                    ("alone", alone), ("beside", beside), ("five", five), ("busy", busy), ("idle", idle))})
                print(f"round {round_number}, {name}: alone p50 {p50_ms(alone):.0f} ms ({len(alone)} questions), "
                      f"beside pages p50 {p50_ms(beside):.0f} ms ({len(beside)}, at most {max(beside) * 1000:.0f}), "
                      f"{rate:.0f} pages/s, 5-shot p50 {p50_ms(five):.0f} ms, "
                      f"pages p50 {p50_ms(busy):.0f} ms busy / {p50_ms(idle):.0f} ms idle, "
                      f"load average {os.getloadavg()[0]:.1f}", flush=True)
        print(f"over {args.rounds} rounds of {args.seconds:g} s per phase, {args.clients} page clients:")
        for name, got in found.items():
            print(f"{name}: 0-shot alone p50 {p50_ms(got['alone']):.0f} ms ({len(got['alone'])} questions); "
                  f"beside pages p50 {p50_ms(got['beside']):.0f} ms ({len(got['beside'])}); "
                  f"ratio {statistics.median(got['beside']) / statistics.median(got['alone']):.2f}x; "
                  f"5-shot alone p50 {p50_ms(got['five']):.0f} ms ({len(got['five'])}); "
                  f"{statistics.mean(got['pages']):.0f} pages/s beside scoring; pages p50 "
                  f"{p50_ms(got['busy']):.0f} ms beside the busy model, {p50_ms(got['idle']):.0f} ms beside the idle "
                  f"one (p99 {statistics.quantiles(got['busy'], n=100)[98] * 1000:.0f} / "
                  f"{statistics.quantiles(got['idle'], n=100)[98] * 1000:.0f} ms); {memory(pids[name])}")
        for line in goals(by_round):
            print(line)


def spread(ratios: list[float]) -> str:
    """Round by round ratios: their median, and the lowest and highest (one round's is one sample)."""
    return f"{statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f}x)"


def goals(by_round: dict[str, list[dict[str, float]]]) -> list[str]:
    """Issue 36's goals, each judged round by round, since a round compares the variants (or the busy
    and idle model) minutes apart at most, while the machine's own load moves between rounds."""
    lines = []
    for name, rounds in by_round.items():
        busy_idle = [r["busy"] / r["idle"] for r in rounds]
        lines.append(f"goal, pages beside the busy model no slower than beside the idle one ({name}): busy / idle "
                     f"{spread(busy_idle)}, no slower in {sum(ratio <= 1 for ratio in busy_idle)} of {len(rounds)} rounds")
    (_, rounds), *others = by_round.items()
    for before, theirs in others:
        for key, what, goal in (("alone", "0-shot alone", 1.0), ("five", "5-shot alone", 1.0),
                                ("beside", "0-shot beside the page readers", 0.5)):
            ratios = [mine[key] / other[key] for mine, other in zip(rounds, theirs, strict=True)]
            lines.append(f"goal, {what} at most {goal:g}x {before}'s p50: {spread(ratios)}, met in "
                         f"{sum(ratio <= goal for ratio in ratios)} of {len(ratios)} rounds")
    return lines


if __name__ == "__main__":
    main()
