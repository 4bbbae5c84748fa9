"""Live scoring while many readers fetch pages (issue 26, item 11: scoring slowed about 8x under 16 page
clients; issue 36: the model in a server of its own).

    python3 bench/scoring_under_pages.py                          # this checkout, 3 rounds
    python3 bench/scoring_under_pages.py --before main --rounds 4  # and the code at a git ref, interleaved
    python3 bench/scoring_under_pages.py --before c2f6552 --env SCORER_THREADS=1

One client scores real questions (POST /api/score) against the production server (python3 app.py,
the model loaded at start, SCORER_THREADS as configured). Each round:

* 0-shot questions alone, one server after the other (with ``--before REF``, a second server runs
  the code at REF, exported with git archive; who goes first changes each round), then 5-shot ones:
  the same questions, compared seconds apart, so a machine whose load moves slows both alike;
* for each server, a phase of ``--clients`` threads fetching /mmlu/ one request after another while
  the model is busy (questions scored back to back) and idle by turns, a second each: the questions'
  latencies beside the pages, and each page's time, a page beside the busy model compared with one
  beside the idle model a second apart;
* with ``--floor``, the same phase with a bare matrix-product process (this model's layer shapes, one
  thread, no server) in the model's place: what any computation on the other core costs the pages.

At the end, each goal of issue 36 judged round by round, and each server's resident memory: the
site's process and, where the model runs in a server of its own (app.py's child), that one's.

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
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO_ROOT, exported, hardware, running_server  # noqa: E402

from tools.launcher import rss_mib  # noqa: E402

SUBJECT = "astronomy"
WARM_QUESTIONS = 5  # the model warm, the subject's prefix cached
WARM_FIRST = 100  # the warming questions' first index, past the measured ones: a question asked again may be
# answered from a cache (the model server keeps the last prompts' next-token distributions), never measured so
WARM_PAGES_S = 5.0  # pages fetched, unmeasured, before the first round: its first beside-pages phase ran
# slower than the later ones in most runs here, on either server
# Quiet before a server's questions alone: the other server's torch threads stop spinning, and the
# model server sees the cores free long enough to use them all (core_share's RAISE_AFTER_S, 1 s).
SETTLE_S = 1.5
WINDOW_S = 1.0  # the model busy, then idle, by turns, within a phase of page readers
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


def fetch_pages(port: int, clients: int, stop, spans) -> None:
    """In a child process: ``clients`` threads fetching /mmlu/ (gzip) until ``stop`` is set; each
    page's (start, end) on the machine's monotonic clock (the parent's too) go to ``spans`` (a queue)
    at the end."""
    kept: list[tuple[float, float]] = []

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while not stop.is_set():
            started = time.monotonic()
            connection.request("GET", "/mmlu/", headers={"Accept-Encoding": "gzip"})
            response = connection.getresponse()
            response.read()
            kept.append((started, time.monotonic()))

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    spans.put(kept)


@dataclass
class PagesPhase:
    """One phase of page readers: questions scored in the busy windows, and the seconds of the pages
    that began and ended within a busy window and within an idle one."""

    beside: list[float]
    busy: list[float]
    idle: list[float]
    busy_rate: float  # pages per second in the busy windows


def pages_phase(port: int, seconds: float, first: int, clients: int, load=None) -> PagesPhase:
    """The page clients fetch for ``seconds`` while the model is busy and idle by turns, WINDOW_S each
    (questions scored back to back, then none): the machine's load moves over seconds, so pages beside
    the busy model are compared with pages beside the idle one a second apart, not a phase apart.
    With ``load`` (a MatmulLoad: another process, resumed and paused), the same for it instead of questions."""
    stop, spans = multiprocessing.Event(), multiprocessing.Queue()
    pages = multiprocessing.Process(target=fetch_pages, args=(port, clients, stop, spans), daemon=True)
    pages.start()
    time.sleep(0.5)  # every client connected and fetching
    windows, latencies, busy = [], [], True
    finish = time.monotonic() + seconds
    while time.monotonic() < finish:
        opened = time.monotonic()
        if load is not None:
            (load.resume if busy else load.pause)()
            time.sleep(WINDOW_S)
        elif busy:
            while time.monotonic() < opened + WINDOW_S:
                latencies.append(score(port, first + len(latencies)))
        else:
            time.sleep(WINDOW_S)
        windows.append((opened, time.monotonic(), busy))
        busy = not busy
    if load is not None:
        load.pause()
    stop.set()
    kept = spans.get(timeout=120)
    pages.join(timeout=120)
    within: dict[bool, list[float]] = {True: [], False: []}
    for started, ended in kept:
        for opened, closed, was_busy in windows:
            if opened <= started and ended <= closed:
                within[was_busy].append(ended - started)
                break
    busy_seconds = sum(closed - opened for opened, closed, was_busy in windows if was_busy)
    return PagesPhase(latencies, within[True], within[False], len(within[True]) / busy_seconds)


def scoring_alone(ports: dict[str, int], order: list[str], seconds: float, first: int, shots: int) -> dict[str, list[float]]:
    """Each server's questions alone, one server after another in ``order`` (the same questions),
    each after SETTLE_S of quiet: compared seconds apart, not a phase of pages apart."""
    latencies = {}
    for name in order:
        time.sleep(SETTLE_S)
        latencies[name] = scoring_for(ports[name], seconds, first, shots)
    return latencies


class MatmulLoad:
    """A process computing what a model pass computes, on one thread (torch, this model's layer
    shapes), stopped and resumed by signals: the floor any computation on the other core sets for the
    pages, with no model server, no HTTP and no site work in it."""

    def __init__(self):
        self.process = multiprocessing.Process(target=self._work, daemon=True)
        self.process.start()
        time.sleep(3)  # torch imported, the weights made
        self.pause()

    @staticmethod
    def _work() -> None:
        import torch
        import torch.nn.functional as F

        torch.set_num_threads(1)
        width, inner, tokens = 576, 1536, 90  # SmolLM2-135M's layer, a 0-shot question's own tokens
        layers = [(torch.randn(960, width), torch.randn(width, width), torch.randn(2 * inner, width),
                   torch.randn(width, inner)) for _ in range(30)]
        x = torch.randn(tokens, width)
        while True:
            for qkv, out, gate_up, down in layers:
                F.linear(x, qkv)
                h = F.linear(x, out)
                F.linear(F.silu(F.linear(h, gate_up)[:, :inner]), down)

    def pause(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def close(self) -> None:
        self.process.kill()
        self.process.join()


def memory(pid: int) -> str:
    """The server's resident memory, and its model server child's where it has one."""
    children = subprocess.run(["pgrep", "-P", str(pid), "-f", "livescoring serve"], capture_output=True,
                              text=True).stdout.split()
    mine = f"site process {rss_mib(pid):.0f} MiB"
    return mine + "".join(f", model server {rss_mib(int(child)):.0f} MiB" for child in children)


def p50_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def started(stack: contextlib.ExitStack, variants: dict[str, Path], env: dict[str, str],
            clients: int) -> tuple[dict[str, int], dict[str, int]]:
    """Each variant's server started, warm (its model, the pages, the 5-shot prefix): ports and pids."""
    ports, pids = {}, {}
    for name, root in variants.items():
        server = stack.enter_context(running_server(env=env, timeout=600, root=root))
        ports[name] = int(server.url.rsplit(":", 1)[1])
        for index in range(WARM_QUESTIONS):
            score(ports[name], WARM_FIRST + index)
        pages_phase(ports[name], WARM_PAGES_S, WARM_FIRST + WARM_QUESTIONS, clients)
        scoring_for(ports[name], 1, WARM_FIRST, shots=5)  # the 5-shot prefix read once
        pids[name] = server.pid
    return ports, pids


def summary(found: dict[str, dict[str, list[float]]], pids: dict[str, int], heading: str) -> None:
    print(heading)
    for name, got in found.items():
        print(f"{name}: 0-shot alone p50 {p50_ms(got['alone']):.0f} ms ({len(got['alone'])} questions); "
              f"beside pages p50 {p50_ms(got['beside']):.0f} ms ({len(got['beside'])}); "
              f"ratio {statistics.median(got['beside']) / statistics.median(got['alone']):.2f}x; "
              f"5-shot alone p50 {p50_ms(got['five']):.0f} ms ({len(got['five'])}); "
              f"{statistics.mean(got['pages']):.0f} pages/s beside scoring; pages p50 "
              f"{p50_ms(got['busy']):.0f} ms beside the busy model, {p50_ms(got['idle']):.0f} ms beside the idle "
              f"one (p99 {statistics.quantiles(got['busy'], n=100)[98] * 1000:.0f} / "
              f"{statistics.quantiles(got['idle'], n=100)[98] * 1000:.0f} ms); {memory(pids[name])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10, help="of each phase (default 10)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--before", metavar="REF", help="also run the code at this git ref, round by round")
    parser.add_argument("--floor", action="store_true",
                        help="each round, also the pages beside a bare matrix-product process instead of the model")
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
        ports, pids = started(stack, variants, {"SCORER_LOAD_AT_START": "1", **data_env, **settings}, args.clients)
        floor = MatmulLoad() if args.floor else None
        if floor is not None:
            stack.callback(floor.close)
        keys = ("alone", "beside", "five", "busy", "idle")
        found = {name: {key: [] for key in (*keys, "pages")} for name in variants}
        by_round: dict[str, list[dict[str, float]]] = {name: [] for name in variants}  # each phase's p50
        floors: list[float] = []
        index = 0
        for round_number in range(1, args.rounds + 1):
            order = list(ports) if round_number % 2 else list(ports)[::-1]  # who goes first changes
            alone = scoring_alone(ports, order, args.seconds, index, shots=0)
            five = scoring_alone(ports, order, args.seconds, index, shots=5)
            index += len(alone["this checkout"])
            for name, port in ports.items():
                phase = pages_phase(port, 2 * args.seconds, index, args.clients)
                index += len(phase.beside)
                got = {"alone": alone[name], "beside": phase.beside, "five": five[name], "busy": phase.busy,
                       "idle": phase.idle}
                for key, values in got.items():
                    found[name][key].extend(values)
                found[name]["pages"].append(phase.busy_rate)
                by_round[name].append({key: statistics.median(values) for key, values in got.items()})
                print(f"round {round_number}, {name}: alone p50 {p50_ms(alone[name]):.0f} ms ({len(alone[name])} "
                      f"questions), beside pages p50 {p50_ms(phase.beside):.0f} ms ({len(phase.beside)}, at most "
                      f"{max(phase.beside) * 1000:.0f}), {phase.busy_rate:.0f} pages/s, 5-shot p50 "
                      f"{p50_ms(five[name]):.0f} ms, pages p50 {p50_ms(phase.busy):.0f} ms busy / "
                      f"{p50_ms(phase.idle):.0f} ms idle, load average {os.getloadavg()[0]:.1f}", flush=True)
            if floor is not None:
                phase = pages_phase(ports["this checkout"], 2 * args.seconds, 0, args.clients, load=floor)
                floors.append(statistics.median(phase.busy) / statistics.median(phase.idle))
                print(f"round {round_number}, the floor: pages p50 {p50_ms(phase.busy):.0f} ms beside a bare matrix-"
                      f"product process / {p50_ms(phase.idle):.0f} ms beside none", flush=True)
        summary(found, pids, f"over {args.rounds} rounds of {args.seconds:g} s per phase, {args.clients} page clients:")
        for line in goals(by_round):
            print(line)
        if floors:
            print(f"the floor, pages beside a bare matrix-product process / beside none: {spread(floors)}")


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
