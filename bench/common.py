"""Shared pieces of the benchmark scripts: start the real server, name the hardware."""
from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def hardware() -> str:
    """The CPU model and core count, so every printed figure names its machine."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def rss_mib(pid: int) -> float:
    """Resident memory of a process in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextmanager
def running_server(extra_env: dict | None = None, threads: int | None = None):
    """Start `python app.py` on a free loopback port; yield (base_url, process)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "app.py", "--port", str(port)]
    if threads:
        command += ["--threads", str(threads)]
    proc = subprocess.Popen(command, cwd=REPO_ROOT, env={**os.environ, **(extra_env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server did not start")
                time.sleep(0.2)
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)
