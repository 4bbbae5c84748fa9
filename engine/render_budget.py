"""Each client's budget of CPU time for pages drawn afresh (engine/caching.py's ``cached_page``):
kept pages cost nothing and always answer; a client whose renders of pages not yet kept cost more
than PAGE_RENDER_BUDGET_S in PAGE_RENDER_WINDOW_S gets 429 with Retry-After."""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

from flask import current_app, request
from werkzeug.exceptions import TooManyRequests

from .security import client_key


class RenderBudget:
    """How much render time each client has spent lately on pages not yet kept (a leaky bucket per
    client, keyed by ``security.client_key``: one IPv4 address, one IPv6 /64).

    Measured in the rendering thread's CPU seconds, not in renders: a widget's JSON takes 5 ms to draw
    and a document with its sources shown 300 ms, so a count that let a reader drag a slider would let an attacker
    take a core. What a client spent drains at ``budget / window`` seconds a second; a client that has
    spent ``budget`` or more is refused until it has drained below. Renders already under way when a
    client reaches its budget still finish and are charged: a client that starts many at once is then
    refused for longer. At most MAX_CLIENTS clients are remembered (the least recently charged go
    first), so many addresses cannot grow the table."""

    MAX_CLIENTS = 4096

    def __init__(self):
        self._spent: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (CPU-s, when)
        self._lock = threading.Lock()

    def _now_spent(self, client: str, rate: float, now: float) -> float:
        spent, when = self._spent.get(client, (0.0, now))
        return max(0.0, spent - (now - when) * rate)

    def wait_s(self, client: str, budget: float, window: float) -> int:
        """Seconds until ``client`` may render again (0: now)."""
        rate, now = budget / window, time.monotonic()
        with self._lock:
            over = self._now_spent(client, rate, now) - budget
        return 0 if over < 0 else max(1, math.ceil(over / rate))

    def charge(self, client: str, seconds: float, budget: float, window: float) -> None:
        rate, now = budget / window, time.monotonic()
        with self._lock:
            self._spent[client] = (self._now_spent(client, rate, now) + seconds, now)
            self._spent.move_to_end(client)
            while len(self._spent) > self.MAX_CLIENTS:
                self._spent.popitem(last=False)


def render_within_budget(view, args, kwargs):
    """The view's answer, its CPU time charged to the client; a 429 if the client's budget is spent."""
    config, budget = current_app.config, current_app.extensions["caching"].renders
    client = client_key(request.remote_addr) or ""
    limits = (config["PAGE_RENDER_BUDGET_S"], config["PAGE_RENDER_WINDOW_S"])
    if limits[0] <= 0:
        return view(*args, **kwargs)
    wait = budget.wait_s(client, *limits)
    if wait:
        raise TooManyRequests(f"This address has asked for many pages that had to be drawn afresh; pages already "
                              f"drawn still load. Try again in {wait} s.", retry_after=wait)
    started = time.thread_time()
    try:
        return view(*args, **kwargs)
    finally:
        budget.charge(client, time.thread_time() - started, *limits)
