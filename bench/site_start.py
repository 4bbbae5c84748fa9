"""How long the site takes to start, and how much memory it holds once readers have used it.

Start (the default): a fresh Python process builds the app and warms every document (engine.warm_up,
what app.py does before it listens), for a base commit (a temporary git worktree) and for this
working tree, in turns, so both see the same machine at the same time; each phase's median and their
ratio. Every server start pays this, and so does each test worker and each server the tests start.

    python3 bench/site_start.py --base 310f384
    python3 bench/site_start.py --base HEAD~3 --rounds 9

Memory (``--memory``; issue 36: under 200 MB): the site as production runs it (``python3 app.py``,
its own model server a child process), then everything a reader reaches, step by step: each document
with its glossary, its widgets (page, embed and JSON view), the run pages, the question API (every
group's list and a question of each), the offline files (Pyodide, the wheel, the vendored editor) and
a live score through the model server. After each step it prints the web process's resident memory
(VmRSS) and which of pyarrow, numpy and pandas it has loaded; with ``--base`` the base commit's
site goes through the same steps first.

    python3 bench/site_start.py --memory
    python3 bench/site_start.py --memory --base main
"""
from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import hardware, rss_mib, running_server  # noqa: E402
from benchmarks.mmlu.server import data_dir  # noqa: E402
from benchmarks.mmlu_pro.server import data_dir as pro_data_dir  # noqa: E402

# Run in the tree being measured: the phases app.py goes through before it listens.
START = """
import json, time
started = time.perf_counter()
from engine import create_app, warm_up
imported = time.perf_counter()
app = create_app({})
built = time.perf_counter()
pages = warm_up(app)
warm = time.perf_counter()
assert all(line.endswith(" 200") for line in pages), pages
print(json.dumps({"import (s)": imported - started, "create_app (s)": built - imported,
                  "warm_up (s)": warm - built, "whole start (s)": warm - started}))
"""


def measure(tree: Path, env: dict) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", START], cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


HEAVY_MODULES = ("pyarrow", "numpy", "pandas")  # what the web process should not need to hold


def loaded(pid: int) -> str:
    """Which of HEAVY_MODULES the process has mapped (their shared libraries in /proc/PID/maps)."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return ", ".join(name for name in HEAVY_MODULES if f"/{name}/" in maps or f"/{name}.libs/" in maps) or "none"


class Reader:
    """A reader's requests to one server, each checked for a 2xx answer, read whole and dropped."""

    def __init__(self, url: str):
        self.host, self.port = urllib.parse.urlsplit(url).netloc.split(":")

    def request(self, path: str, body: dict | None = None, gzip: bool = True, missing_ok: bool = False) -> bytes:
        """GET ``path`` (POST ``body`` as JSON, from the site's own origin); the answer's bytes
        (with ``missing_ok`` a 404 too: not every widget has a JSON view)."""
        connection = http.client.HTTPConnection(self.host, int(self.port), timeout=600)
        headers = {"Accept-Encoding": "gzip"} if gzip else {}
        if body is not None:
            headers |= {"Content-Type": "application/json", "Origin": f"http://{self.host}:{self.port}"}
        connection.request("GET" if body is None else "POST", path,
                           body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        assert 200 <= response.status < 300 or missing_ok and response.status == 404, f"{path}: {response.status} {data[:300]!r}"
        return data

    def json(self, path: str, body: dict | None = None):
        return json.loads(self.request(path, body, gzip=False))


def reader_steps(reader: Reader) -> Iterator[str]:
    """Everything a reader reaches, a step at a time; yields each step's name once it is done."""
    for slug in ("mmlu", "mmlu-pro", "scoring-lesson"):
        gallery = reader.request(f"/{slug}/widgets/", gzip=False).decode()
        names = sorted(set(re.findall(rf'/{slug}/widgets/([\w-]+)', gallery)))
        paths = [f"/{slug}/", f"/{slug}/?sources=on", f"/{slug}/glossary/"]
        for name in names:
            paths += [f"/{slug}/widgets/{name}", f"/embed/{slug}/{name}", f"/api/widgets/{slug}/{name}"]
        for path in paths:
            reader.request(path, missing_ok=path.startswith("/api/widgets/"))
        yield f"/{slug}/, its glossary and its {len(names)} widgets"
    runs = ["/mmlu/run", "/mmlu-pro/run", "/scoring-lesson/overlap", "/math-core", "/", "/api/openapi.json",
            "/api/explainers"]
    for path in runs:
        reader.request(path)
    yield "the run pages, the math core, the index and the API's description"
    for prefix, field in (("/api/questions", "subjects"), ("/api/mmlu-pro/questions", "categories")):
        for group in reader.json(prefix)[field]:
            path = f"{prefix}/{urllib.parse.quote(group['name'])}"
            reader.request(path)  # MMLU: a page of previews; MMLU-Pro: the first question
            reader.request(f"{path}?split=test&index=1")
    yield "every subject's and category's questions through the API"
    offline = reader.json("/api/offline")
    files = offline["runtime"] + offline["saved"]
    for path in files:
        reader.request(path)
    yield "the offline files (Pyodide, the wheel, the vendored editor)"
    reader.json("/api/score", {"subject": "astronomy", "split": "test", "index": 0, "shots": 0})
    reader.json("/api/mmlu-pro/score", {"category": "physics", "index": 0, "shots": 0})
    yield "a live score of each benchmark through the model server"


def memory_run(tree: Path, env: dict) -> Iterator[tuple[str, float, str]]:
    """The site at ``tree`` started as production does, then reader_steps: after each step its name
    (and the seconds since the start), the web process's RSS and the heavy modules it holds."""
    started = time.monotonic()
    with running_server(root=tree, env=env, timeout=180) as server:
        for step in itertools.chain(["started (app.py warmed every document)"], reader_steps(Reader(server.url))):
            yield f"{step}, {time.monotonic() - started:.0f} s", rss_mib(server.pid), loaded(server.pid)


@contextlib.contextmanager
def base_tree(revision: str) -> Iterator[Path]:
    """The commit ``revision`` checked out in a temporary git worktree."""
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), revision], cwd=ROOT, check=True)
        try:
            yield base
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the commit to compare with (any git revision); required for the start")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per tree (default 5)")
    parser.add_argument("--memory", action="store_true", help="the web process's memory through a reader's visit")
    args = parser.parse_args()
    if not args.memory and not args.base:
        parser.error("the start's figures need --base")
    # The base's worktree is not beside ../shared: both read this tree's data folders.
    env = {**os.environ, "MMLU_DATA_DIR": str(data_dir()), "MMLU_PRO_DATA_DIR": str(pro_data_dir()), "PYTHONPATH": ""}
    with contextlib.ExitStack() as stack:
        trees = {f"base {args.base}": stack.enter_context(base_tree(args.base))} if args.base else {}
        trees["this tree"] = ROOT
        if args.memory:
            print(f"the web process's resident memory, on {hardware()}; load average {os.getloadavg()[0]:.1f}")
            for name, tree in trees.items():
                print(f"  {name}:", flush=True)
                for step, mib, modules in memory_run(tree, env):
                    print(f"    {mib:6.1f} MiB  after {step}  (loaded: {modules})", flush=True)
            print(f"load average {os.getloadavg()[0]:.1f} at the end")
            return
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                runs[name].append(measure(tree, env))
    print(f"site start, {args.rounds} fresh processes per tree, medians, on {hardware()}")
    (base_name, base_runs), (name, now_runs) = runs.items()
    for phase in base_runs[0]:
        before = statistics.median(r[phase] for r in base_runs)
        after = statistics.median(r[phase] for r in now_runs)
        print(f"  {phase:16} {base_name}: {before:6.2f}   {name}: {after:6.2f}   ratio {after / before:.2f}")


if __name__ == "__main__":
    main()
