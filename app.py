"""Start the site: every document under content/

    python app.py                 # production server (waitress) on http://127.0.0.1:8000
    python app.py --dev           # Flask's reloading server for authors; content re-read on change

One process serves everything: the live-scoring model is loaded once, in that process, and
waitress's threads share it through the scoring queue.

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


PAGE_NICENESS = 5  # request threads run this much nicer than the model's worker (Linux: per thread)
PAGE_TURN_WAIT_S = 5.0  # a page waits at most this long for its turn while the model works, then runs anyway
SWITCH_INTERVAL_S = 0.0005  # how long a thread may hold the GIL while another waits (Python's default: 5 ms)


def yielding_to_the_model(app, scoring=None):
    """The WSGI app, served by threads that each lower their own CPU priority on their first request,
    and that make room for the model's worker (``scoring``) while it has work.

    Pages and the model share the cores and the GIL: sixteen readers fetching pages slowed a live
    question about eight times (issue 26; docs/performance.md has each cause measured).
    - A request thread only reads files, renders and waits for the queue; the model's worker (made
      at start-up, at the process's priority: livescoring/worker.py) gets the cores first.
    - While a page (a GET or HEAD request) is being answered, the worker runs on one torch thread:
      its threads wait for each other at every operation, and a core busy with a page stalled both.
    - While the model has work, GET and HEAD requests take turns (the model's work is always a
      POST, so none of them waits for it while holding the turn). Pages run Python under the GIL, so
      they gain little by running together, and sixteen at once made the worker wait behind each of
      them for the GIL after every torch operation.
    Where threads have no priority of their own (not Linux), the first does nothing."""
    lowered = threading.local()
    pages = [0]  # GET and HEAD requests being answered or waiting for their turn
    counting = threading.Lock()
    page_turn = threading.Lock()

    def wsgi(environ, start_response):
        if not getattr(lowered, "done", False):
            lowered.done = True
            try:
                thread = threading.get_native_id()
                os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + PAGE_NICENESS)
            except (AttributeError, OSError):
                pass
        if scoring is None or environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return app(environ, start_response)
        with counting:
            pages[0] += 1
        taking_turns = scoring.outstanding() > 0 and page_turn.acquire(timeout=PAGE_TURN_WAIT_S)
        try:
            return app(environ, start_response)  # the body is made here; waitress's main thread sends it
        finally:
            if taking_turns:
                page_turn.release()
            with counting:
                pages[0] -= 1

    if scoring is not None:
        scoring.others_busy = lambda: pages[0] > 0
    return wsgi


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


def serve(app, host: str, port: int, threads: int) -> None:
    """Run waitress until SIGTERM or SIGINT, then drain gracefully and exit 0."""
    import waitress
    from waitress import wasyncore

    config = app.config
    # The model's worker takes the GIL back after every torch operation (hundreds per question); with
    # page threads running Python it waited up to the switch interval each time.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    server = waitress.create_server(
        yielding_to_the_model(app, app.extensions.get("scoring")), host=host, port=port, threads=threads,
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

    from engine import create_app, warm_up

    if args.dev:
        app = create_app({"CONTENT_RELOAD": True})
        app.run(host=args.host, port=args.port, debug=True)
        return

    app = create_app()
    started = time.monotonic()
    # Before listening: the first reader of a paper gets it as fast as the next one (kept for the
    # Host readers send to this address; an IPv6 one is written in brackets).
    address = f"[{args.host}]" if ":" in args.host else args.host
    pages = warm_up(app, f"http://{address}:{args.port}/")
    print(f"Warmed {', '.join(pages)} in {time.monotonic() - started:.1f} s", flush=True)
    threads = args.threads or app.config["SERVER_THREADS"]
    if threads <= app.config["SCORER_QUEUE_SIZE"] + 2:
        parser.error(f"--threads must exceed SCORER_QUEUE_SIZE + 2 ({app.config['SCORER_QUEUE_SIZE'] + 2}) "
                     "so pages still get a thread while scoring requests wait")
    serve(app, args.host, args.port, threads)


if __name__ == "__main__":
    main()
