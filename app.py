"""Start the site: every document under content/

    python app.py                 # production server (waitress) on http://127.0.0.1:8000
    python app.py --dev           # Flask's reloading server for authors; content re-read on change

The site is the model server's client: the live-scoring model runs in a process of its own
(`python -m livescoring serve`, livescoring/server.py), named by MODEL_SERVER_URL: one server, a
load balancer over several (deploy/), or any OpenAI-compatible server with prompt log-probabilities.
Without MODEL_SERVER_URL this command starts the project's own model server as a child process
(livescoring/supervisor.py: restarted with back-off if it dies, stopped after the site on SIGTERM).
This process imports no torch: its threads serve pages and relay live requests, and the readers'
queue, shares and budgets stay here (livescoring/worker.py's ScoringService over remote.py).
`--dev` keeps the model in the reloading server's own process.

Hardened for an open network even without the proxy in deploy/: at most SERVER_CONNECTION_LIMIT
connections, a connection idle for SERVER_CHANNEL_TIMEOUT_S is closed, bodies over
MAX_CONTENT_LENGTH and request heads over 32 KiB are refused by waitress before anything is
spooled, and waitress's own error answers carry the security headers (JSON under /api/).
SIGTERM or SIGINT stops accepting connections, lets the requests in flight finish (for at most
SERVER_SHUTDOWN_GRACE_S) and exits 0; a generation still streaming near the end of the grace ends
with a closing line that says the server is shutting down (livescoring/worker.py, ``stop_by``).

waitress keeps reading a connection while its request runs (``channel_request_lookahead``), so a
client that goes away is noticed: the model's queue stops its work (``waitress.client_disconnected``).
glibc gets at most MALLOC_ARENA_MAX (default 2) malloc arenas: one per waitress thread grew the
server from 0.7 to 6.7 GB over long-prompt requests (issue 26).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import select
import signal
import sys
import threading
import time

MAX_REQUEST_HEAD_BYTES = 32 * 1024  # request line and headers; waitress answers 431 beyond it
REQUEST_LOOKAHEAD = 1  # requests waitress reads ahead on a busy connection: it sees the client leave
STOP_MARGIN_S = 2.0  # before the grace ends, a stream still running is closed with a line saying why
WEB_NICENESS = 5  # how much nicer the site runs than the model server it starts beside itself
MALLOC_ARENAS = 2

log = logging.getLogger("annotated-papers")


def _front_error_channel():
    """waitress's HTTP channel, answering its own errors (a malformed request, a body over the
    limit) with the site's security headers, and as JSON under /api/ and /oembed."""
    from waitress.channel import HTTPChannel
    from waitress.task import ErrorTask

    from engine.security import security_headers

    class FrontErrorTask(ErrorTask):
        def execute(self):
            error = self.request.error
            path = (getattr(self.request, "path", "") or "").split("?")[0]
            if path.startswith(("/api/", "/oembed")):
                body = json.dumps({"error": f"{error.reason}: {error.body}", "status": error.code}).encode()
                mimetype = "application/json"
            else:
                body = f"{error.reason}\n\n{error.body}\n".encode()
                mimetype = "text/plain; charset=utf-8"
            self.status = f"{error.code} {error.reason}"
            self.response_headers.extend([("Content-Type", mimetype), ("Content-Length", str(len(body))),
                                          ("Cache-Control", "no-store"), *security_headers(path).items()])
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)

    class FrontChannel(HTTPChannel):
        error_task_class = FrontErrorTask

    return FrontChannel


def limit_malloc_arenas() -> None:
    """At most MALLOC_ARENA_MAX glibc malloc arenas (MALLOC_ARENAS unless the environment says
    otherwise, which glibc has then already read). Called before any thread starts: arenas are made
    per thread that finds the others locked, and each keeps the memory it once held (torch's
    buffers for long prompts), so 24 waitress threads grew the process to 6.7 GB. Not glibc: nothing."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_arena_max = -8  # malloc.h
        if libc.mallopt(m_arena_max, MALLOC_ARENAS):
            os.environ["MALLOC_ARENA_MAX"] = str(MALLOC_ARENAS)  # children (and /proc) see the setting
    except (OSError, AttributeError):
        pass


def busy(server) -> bool:
    """Whether any request is still being worked on, its answer still being sent, or its bytes still
    waiting to be read (a request sent just before the signal, on a connection not yet read)."""
    if server.task_dispatcher.active_count or server.task_dispatcher.queue:
        return True
    channels = [channel for channel in list(server._map.values()) if channel is not server]
    if any(getattr(channel, "requests", None) or getattr(channel, "total_outbufs_len", 0) for channel in channels):
        return True
    sockets = [channel.socket for channel in channels if getattr(channel, "socket", None) is not None]
    try:
        return bool(select.select(sockets, [], [], 0)[0])
    except (OSError, ValueError):  # a socket closed meanwhile: the loop removes its channel
        return False


def create_server(app, host: str, port: int, threads: int):
    """A waitress server for ``app`` under the site's limits, listening but not yet serving."""
    import waitress

    config = app.config
    server = waitress.create_server(
        app, host=host, port=port, threads=threads,
        ident="annotated-papers",
        connection_limit=config["SERVER_CONNECTION_LIMIT"], channel_timeout=config["SERVER_CHANNEL_TIMEOUT_S"],
        max_request_body_size=config["MAX_CONTENT_LENGTH"], max_request_header_size=MAX_REQUEST_HEAD_BYTES,
        cleanup_interval=min(30, config["SERVER_CHANNEL_TIMEOUT_S"]),
        # waitress drops X-Forwarded-* headers unless told to keep them; behind nginx (TRUSTED_PROXIES)
        # the app's ProxyFix reads them, or every reader would share the proxy's address and its
        # one share of the scoring queue.
        clear_untrusted_proxy_headers=not config["TRUSTED_PROXIES"],
        channel_request_lookahead=REQUEST_LOOKAHEAD,
    )
    server.channel_class = _front_error_channel()
    return server


def serve(app, host: str, port: int, threads: int, model_server=None) -> None:
    """Run waitress until SIGTERM or SIGINT, then drain gracefully and exit 0; the site's own model
    server (``model_server``, a livescoring.supervisor.ModelServerProcess) stops after the streams."""
    from waitress import wasyncore

    config = app.config
    server = create_server(app, host, port, threads)
    stopping = threading.Event()
    drained = threading.Event()

    def drain() -> None:
        deadline = time.monotonic() + config["SERVER_SHUTDOWN_GRACE_S"]
        while busy(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        if busy(server):
            log.warning("shutting down with requests still in flight after %.0f s", config["SERVER_SHUTDOWN_GRACE_S"])
        drained.set()

    def stop(signum, _frame) -> None:
        if stopping.is_set():
            return
        stopping.set()
        print(f"Received {signal.Signals(signum).name}: no new connections; finishing requests in flight",
              flush=True)
        # Connections already waiting in the listen backlog were sent before the signal: take them in,
        # so their requests are answered, then stop listening.
        for _ in range(config["SERVER_CONNECTION_LIMIT"]):
            if not select.select([server.socket], [], [], 0)[0]:
                break
            server.handle_accept()
        server.accepting = False
        server.del_channel()  # the listening socket leaves the loop: new connections are refused
        server.socket.close()
        grace = config["SERVER_SHUTDOWN_GRACE_S"]
        scoring = app.extensions.get("scoring")
        if scoring is not None:  # streams finish if they can; else they end, saying why, before the grace does
            scoring.stop_by(time.monotonic() + max(0.0, grace - min(STOP_MARGIN_S, grace / 4)))
        threading.Thread(target=drain, name="drain", daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"Serving on http://{host}:{port}/ with {threads} threads", flush=True)
    while not drained.is_set():
        wasyncore.loop(timeout=0.2, map=server._map, use_poll=True, count=1)
    server.task_dispatcher.shutdown(timeout=2)
    if model_server is not None:
        model_server.stop()
    print("Stopped.", flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: torch's and the tokenizer's native threads abort the process
    # ("terminate called without an active exception") when it destroys them at exit.
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--threads", type=int, default=None, help="waitress threads (default: SERVER_THREADS)")
    parser.add_argument("--dev", action="store_true", help="development server with reloading")
    args = parser.parse_args()
    limit_malloc_arenas()

    from engine import create_app, site_packages, warm_up

    if args.dev:
        app = create_app({"CONTENT_RELOAD": True})
        app.run(host=args.host, port=args.port, debug=True)
        return

    model_server = None
    if not os.environ.get("MODEL_SERVER_URL"):
        # No model server named: start the project's own beside the site (livescoring/supervisor.py),
        # kept running and restarted if it dies. The model lives there; this process imports no torch.
        from livescoring.supervisor import ModelServerProcess

        model_server = ModelServerProcess(log_path=os.environ.get("MODEL_SERVER_LOG") or None).start()
        os.environ["MODEL_SERVER_URL"] = model_server.url
        print(f"Model server: {model_server.url} (pid {model_server.process.pid})", flush=True)
        # On one machine the model comes first: this process (pages, and relaying to the model) runs
        # nicer than its child, which started at the site's own priority. Sixteen page readers on the
        # two cores otherwise slowed a live question 14x (bench/scoring_under_pages.py).
        try:
            os.nice(WEB_NICENESS)
        except OSError:
            pass
    app = create_app()
    started = time.monotonic()
    # Before listening: the first reader of a paper gets it as fast as the next one (kept for the
    # Host readers send to this address; an IPv6 one is written in brackets).
    address = f"[{args.host}]" if ":" in args.host else args.host
    pages = warm_up(app, f"http://{address}:{args.port}/")
    print(f"Warmed {', '.join(pages)} in {time.monotonic() - started:.1f} s", flush=True)
    if site_packages.start_building(app):  # in the background: the share boxes say so meanwhile
        print(f"Building the widgets' packages into {app.config['PACKAGES_DIR']}", flush=True)
    threads = args.threads or app.config["SERVER_THREADS"]
    if threads <= app.config["SCORER_QUEUE_SIZE"] + 2:
        parser.error(f"--threads must exceed SCORER_QUEUE_SIZE + 2 ({app.config['SCORER_QUEUE_SIZE'] + 2}) "
                     "so pages still get a thread while scoring requests wait")
    serve(app, args.host, args.port, threads, model_server)


if __name__ == "__main__":
    main()
