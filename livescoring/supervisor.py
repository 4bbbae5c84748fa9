"""The site's own model server, as a child process kept running: :class:`ModelServerProcess`.

``python3 app.py`` without MODEL_SERVER_URL starts ``python -m livescoring serve`` on a free loopback
port and points the site at it, so the README's one command still runs everything. A thread watches
the child: when it exits (killed, out of memory, crashed) it is started again after a pause that
doubles from RESTART_PAUSE_S up to RESTART_PAUSE_MAX_S while it keeps dying, and is back to the
shortest once it has stayed up STABLE_S. Meanwhile the site's pages answer as always and live
requests are told the model is restarting (benchmarks/server/failures.py). ``stop()`` sends SIGTERM
(the server lets its requests finish) and waits; SIGKILL after the grace.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger("livescoring.supervisor")

RESTART_PAUSE_S, RESTART_PAUSE_MAX_S = 1.0, 30.0
STABLE_S = 60.0  # up this long, a later exit is a new failure, not the same one again
STOP_GRACE_S = 40.0  # the server's own grace (server.SHUTDOWN_GRACE_S) and a margin


def _end_with_parent() -> None:
    """In the child, before it runs: Linux sends it SIGTERM when the site's process dies, even by
    SIGKILL, so no model server outlives the site that started it (elsewhere: nothing)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ModelServerProcess:
    def __init__(self, args: tuple[str, ...] = (), env: dict | None = None, log_path: str | os.PathLike | None = None,
                 port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, "-m", "livescoring", "serve", "--port", str(self.port), *args]
        self.env = {**os.environ, **(env or {})}
        self.log_path = Path(log_path) if log_path else None
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="model-server-watcher", daemon=True)

    def start(self) -> ModelServerProcess:
        self._spawn()
        self._watcher.start()
        return self

    def _spawn(self) -> None:
        # Its output goes to the log file, or to the site's own (the same terminal or journal).
        output = open(self.log_path, "a") if self.log_path else None  # noqa: SIM115 - closed below, the child keeps it
        try:
            # A session of its own: a terminal's Ctrl+C reaches the site, which stops the child in order.
            self.process = subprocess.Popen(self.command, env=self.env, stdin=subprocess.DEVNULL, stdout=output,
                                            stderr=subprocess.STDOUT if output else None, start_new_session=True,
                                            preexec_fn=_end_with_parent)
        finally:
            if output is not None:
                output.close()
        log.info("model server started (pid %d) on %s", self.process.pid, self.url)

    def _watch(self) -> None:
        pause = RESTART_PAUSE_S
        while not self._stopping.is_set():
            started = time.monotonic()
            code = self.process.wait()
            if self._stopping.is_set():
                return
            pause = RESTART_PAUSE_S if time.monotonic() - started >= STABLE_S else pause
            log.warning("the model server exited with status %s; starting it again in %.0f s", code, pause)
            if self._stopping.wait(pause):
                return
            self.restarts += 1
            self._spawn()
            pause = min(RESTART_PAUSE_MAX_S, pause * 2)

    def stop(self, grace: float = STOP_GRACE_S) -> None:
        """SIGTERM (its requests finish), then SIGKILL after ``grace``; no restart after this."""
        self._stopping.set()
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
