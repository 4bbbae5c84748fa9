"""Start the real server (`python3 app.py`) on a free loopback port, for the tests and the benchmarks.

One launcher for everything that needs a running server: the pytest `live_server` fixture
(tests/conftest.py), the Python benchmarks (bench/common.py) and the Node benchmarks
(bench/browser_bench.mjs, through the command line below).

From Python::

    from tools.launcher import running_server

    with running_server(threads=8, env={"SCORER_THREADS": "2"}) as server:
        server.url       # "http://127.0.0.1:PORT", once GET / (or ready_path) answers 200
        server.process   # the subprocess.Popen of app.py; server.pid is its pid
        server.log_path  # where the server's stdout and stderr go

From the command line (what the Node benchmarks spawn)::

    python3 -m tools.launcher --print-url [--threads T] [--ready-path /mmlu/] [--log FILE]

prints the base URL on one line once the server answers, then stays up until it gets SIGTERM or
SIGINT (or, with --until-stdin-closes, until its standard input reaches end of file, so that a
parent that dies without cleaning up still takes the server with it), and stops the server.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TIMEOUT = 60.0


class ServerDidNotStart(RuntimeError):
    """The server exited, or did not answer in time; the message names its log file."""


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

PORT_TRIES = 3  # running_server's attempts when the free port it picked is taken before the bind


# A server started to be measured or tested builds no packages in the background (engine/site_packages.py),
# unless the environment or the caller asks for it.
_QUIET = {"PACKAGES_AT_START": "0"}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    """Resident memory of a process in MiB (Linux); NaN if /proc/PID/status has no VmRSS line."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        tail = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return "\n".join("    " + line for line in tail)


def _wait_until_ready(url: str, process: subprocess.Popen, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                response.read()
            return
        except urllib.error.HTTPError as error:  # it answers, but not with 2xx: not ready, or broken
            problem = f"answered {error.code}"
        except OSError as error:
            problem = str(getattr(error, "reason", error))
        if process.poll() is not None:
            raise ServerDidNotStart(f"the server exited with status {process.returncode} before {url} answered; "
                                    f"see its log, {log_path}:\n{_log_tail(log_path)}")
        if time.monotonic() > deadline:
            raise ServerDidNotStart(f"the server did not answer {url} within {timeout:.0f} s (last: {problem}); "
                                    f"see its log, {log_path}:\n{_log_tail(log_path)}")
        time.sleep(0.2)


def stop(process: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the process has not exited after `grace` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def running_server(*, threads: int | None = None, env: Mapping[str, str] | None = None,
                   log_path: str | os.PathLike | None = None, ready_path: str = "/",
                   timeout: float = DEFAULT_TIMEOUT, port: int | None = None,
                   root: Path = REPO_ROOT, program: tuple[str, ...] = ("app.py",)) -> Iterator[Server]:
    """Run `python3 app.py --port N [--threads T]` from the repository root (or another checkout,
    ``root``) until the block ends; ``program`` names another server that takes ``--port``
    (``("-m", "livescoring", "serve")``: the model server, see running_model_server).

    `env` is added to this process's environment. The server's output goes to `log_path`
    (default: a new file in the temporary directory, kept afterwards). Waits until `ready_path`
    answers 2xx, at most `timeout` seconds; otherwise stops the server and raises
    ServerDidNotStart naming the log file.
    """
    if log_path is None:
        fd, name = tempfile.mkstemp(prefix="annotated-server-", suffix=".log")
        os.close(fd)
        log_path = name
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, PORT_TRIES + 1):
        chosen = port or free_port()
        command = [sys.executable, *program, "--port", str(chosen)]
        if threads:
            command += ["--threads", str(threads)]
        base = f"http://127.0.0.1:{chosen}"
        with open(log_path, "w") as log:
            process = subprocess.Popen(command, cwd=root, env={**_QUIET, **os.environ, **(env or {})},
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_ready(base + ready_path, process, log_path, timeout)
        except ServerDidNotStart:
            stop(process)
            # A free port can be taken between free_port() and the server's bind (parallel test
            # workers, other programs): with no port asked for, try another.
            if port is None and attempt < PORT_TRIES and "Address already in use" in _log_tail(log_path):
                continue
            raise
        except BaseException:
            stop(process)
            raise
        break
    try:
        yield Server(base, process, log_path)
    finally:
        stop(process)


def running_model_server(*, args: tuple[str, ...] = (), env: Mapping[str, str] | None = None,
                         log_path: str | os.PathLike | None = None, timeout: float = 180.0, root: Path = REPO_ROOT):
    """The model server (`python3 -m livescoring serve --port N ARGS`, of this checkout or another,
    ``root``), ready once GET /health answers 200 (its model loaded: the first load on a clean machine
    converts the packaged file)."""
    return running_server(program=("-m", "livescoring", "serve", *args), env=env, log_path=log_path,
                          ready_path="/health", timeout=timeout, root=root)


def _parse_env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise SystemExit(f"--env wants NAME=VALUE, not {pair!r}")
        env[name] = value
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tools.launcher", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--print-url", action="store_true", help="print the base URL on stdout once the server answers")
    parser.add_argument("--threads", type=int, default=None, help="passed to app.py --threads")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="extra environment (repeatable)")
    parser.add_argument("--ready-path", default="/", help="path that must answer 2xx before the server counts as up")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds to wait for it (default 60)")
    parser.add_argument("--log", default=None, help="server log file (default: a new temporary file)")
    parser.add_argument("--until-stdin-closes", action="store_true",
                        help="also stop when standard input reaches end of file (for a parent process's pipe)")
    args = parser.parse_args(argv)

    def on_signal(_signum, _frame):
        raise SystemExit(0)  # unwinds through running_server's `finally`, which stops the server

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if args.until_stdin_closes:
        def watch_stdin():
            while os.read(0, 65536):  # the raw descriptor: a buffered reader would block interpreter shutdown
                pass
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch_stdin, daemon=True).start()

    try:
        with running_server(threads=args.threads, env=_parse_env(args.env), log_path=args.log,
                            ready_path=args.ready_path, timeout=args.timeout) as server:
            print(f"server log: {server.log_path}", file=sys.stderr, flush=True)
            if args.print_url:
                print(server.url, flush=True)
            else:
                print(f"serving {server.url}; stop with Ctrl-C", file=sys.stderr, flush=True)
            server.process.wait()
            print(f"the server exited with status {server.process.returncode}; see {server.log_path}",
                  file=sys.stderr, flush=True)
            return 1
    except ServerDidNotStart as error:
        print(error, file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
