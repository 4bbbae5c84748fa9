"""Pages take turns (engine/turns.py): at most PAGE_TURNS reading requests run the app at once, and a
request that starts work on the model never waits for a turn."""
from __future__ import annotations

import threading
import time

from werkzeug.test import Client
from werkzeug.wrappers import Response

from engine.turns import PageTurns


class HeldApp:
    """A WSGI app whose every request waits for ``release``, counting how many run at once."""

    def __init__(self):
        self.release, self.lock = threading.Event(), threading.Lock()
        self.running = self.most = 0
        self.posts_done = threading.Event()

    def __call__(self, environ, start_response):
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        if environ["REQUEST_METHOD"] == "POST":
            self.posts_done.set()
        else:
            self.release.wait(10)
        with self.lock:
            self.running -= 1
        return Response("ok")(environ, start_response)


def test_reading_requests_take_turns_and_a_post_passes_them():
    inner = HeldApp()
    app = PageTurns(inner, 2)
    pages = [threading.Thread(target=lambda: Client(app).get("/mmlu/")) for _ in range(6)]
    for thread in pages:
        thread.start()
    deadline = time.monotonic() + 10
    while inner.running < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    # Two pages are in the app, four wait for a turn; a live question goes in beside them at once.
    assert Client(app).post("/api/score").status_code == 200
    assert inner.posts_done.is_set() and inner.most == 3
    inner.release.set()
    for thread in pages:
        thread.join(10)
    assert inner.most == 3 and inner.running == 0 and app.free == 2


def test_a_turn_goes_to_the_longest_waiting_page():
    order, inside = [], threading.Event()

    def app_(environ, start_response):
        order.append(environ["PATH_INFO"])
        inside.set()
        if environ["PATH_INFO"] == "/first":
            release.wait(10)
        return Response("ok")(environ, start_response)

    release = threading.Event()
    app = PageTurns(app_, 1)
    first = threading.Thread(target=lambda: Client(app).get("/first"))
    first.start()
    inside.wait(10)
    waiting = []
    for n in range(5):  # each queued before the next starts
        waiting.append(threading.Thread(target=lambda n=n: Client(app).get(f"/page{n}")))
        waiting[-1].start()
        deadline = time.monotonic() + 10
        while len(app._waiting) < n + 1 and time.monotonic() < deadline:
            time.sleep(0.005)
    release.set()
    for thread in (first, *waiting):
        thread.join(10)
    assert order == ["/first", *(f"/page{n}" for n in range(5))]


def test_the_site_takes_turns_as_configured():
    from engine import create_app

    assert isinstance(create_app({"TESTING": True}).wsgi_app, PageTurns)
    assert not isinstance(create_app({"TESTING": True, "PAGE_TURNS": 0}).wsgi_app, PageTurns)
