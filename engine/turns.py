"""Pages take turns: at most PAGE_TURNS requests that only read (GET, HEAD) run the app at once.

The web process's threads share one interpreter lock. With sixteen readers' pages rendered side by
side, a thread relaying a live question (the model server's answer just arrived, the reader's answer
to write) waited for the lock behind every one of them after each blocking call, each holding it for
up to the switch interval (5 ms): a question beside 16 page readers took 542 ms through the site
against 307 ms sent straight to its model server (docs/performance.md). Taking turns costs the pages
little: the lock runs one of them at a time anyway, and a second turn lets one page compress or hash
(done outside the lock) while another renders. Requests that start work on the model (POST: a score,
a form, a generation) never wait for a turn, so they wait for the lock behind at most PAGE_TURNS page
threads. A streamed answer holds its turn only while the app makes it, not while it is sent.
"""
from __future__ import annotations

import collections
import threading

READING = frozenset({"GET", "HEAD"})


class PageTurns:
    """WSGI middleware: ``app`` runs at most ``turns`` reading requests at once, in the order they
    came (a turn is handed to the longest waiting, never taken by one just arrived: with a plain
    semaphore the pages' p99 doubled), and any other request at once."""

    def __init__(self, app, turns: int):
        self.app, self.free = app, turns
        self._lock = threading.Lock()
        self._waiting: collections.deque[threading.Lock] = collections.deque()

    def __call__(self, environ, start_response):
        if environ.get("REQUEST_METHOD") not in READING:
            return self.app(environ, start_response)
        self._take()
        try:
            return self.app(environ, start_response)
        finally:
            self._give()

    def _take(self) -> None:
        with self._lock:
            if self.free:
                self.free -= 1
                return
            handed = threading.Lock()
            handed.acquire()
            self._waiting.append(handed)
        handed.acquire()  # released by _give: the turn passes straight to this request

    def _give(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()
            else:
                self.free += 1
