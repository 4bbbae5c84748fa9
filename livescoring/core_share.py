"""How many threads the model's next pass runs on: the cores other processes leave it.

A pass split over two threads meets a barrier at every operation, where the first thread waits for the
second. When another process (the site's page threads, a reader's browser on the same laptop) holds a
core, the thread on it waits for its time slice and the whole pass waits with it: beside 16 page
readers a live question took 17-22x its time alone (docs/performance.md), where one thread would have
taken about 2x. So before each pass, and before each layer of the lean decoder's passes, the model
thread looks at how much CPU time the machine's other processes took since its last look
(``/proc/stat``'s busy time less this process's own, from ``/proc/self/stat``) and runs on the cores
they left, at least one: fewer at once, more only after RAISE_AFTER_S of room.

By default MKL's matrix products split their sums by the number of threads, so one thread and two
give log-probabilities up to 3e-5 apart: a request's numbers would depend on the machine's load. Its
conditional numerical reproducibility (``MKL_CBWR=AUTO,STRICT``: the fastest code path, sums in an
order fixed whatever the threads) makes them bit for bit the same at one thread and at two
(tests/model/test_model_server.py), at 6-13 % of a pass (docs/performance.md). :func:`products_reproducible_across_threads`
asks for it before the model's first product; a server started with another ``MKL_CBWR`` keeps its
threads fixed.

Linux only; elsewhere (no ``/proc``) the configured threads always.
"""
from __future__ import annotations

import os
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
LOOK_EVERY_S = 0.05  # the kernel counts time in ticks (10 ms): a shorter look would measure little but noise
KEEP = 0.5  # the share of the past in the average of other processes' use (a pass or two of memory)
# More threads only once the others have left the cores free this long (fewer at once): beside 16
# page readers their use dipped now and then for a look or two, a pass then ran on two threads
# while the readers took a core back, and a question took 3-5 s instead of 0.3 (docs/performance.md).
RAISE_AFTER_S = 1.0


def products_reproducible_across_threads() -> bool:
    """Ask MKL for products whose sums do not depend on the threads (before its first product: it
    reads the setting then); True unless the environment asked for another mode."""
    os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
    return "STRICT" in os.environ["MKL_CBWR"].upper()


def _busy_ticks() -> tuple[int, int] | None:
    """(the machine's busy ticks, this process's), or None where /proc does not say."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()[1:]
        with open("/proc/self/stat", "rb") as f:
            own = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return user + nice + system + irq + softirq + steal, int(own[11]) + int(own[12])


class CoreShare:
    """The threads for the next pass: ``most`` when the machine is otherwise idle, fewer by the cores
    other processes use (on average over the last looks), never fewer than one; fewer at once, more
    only after RAISE_AFTER_S of room for them."""

    def __init__(self, most: int, set_threads):
        self.most, self.set_threads = max(1, most), set_threads
        self.threads = self.most
        self.others = 0.0  # cores the other processes used, averaged
        self.last = (time.monotonic(), _busy_ticks())
        self.calm_since: float | None = None  # since when every look found room for more threads

    def before_pass(self) -> int:
        now = time.monotonic()
        if self.most == 1 or self.last[1] is None or now - self.last[0] < LOOK_EVERY_S:
            return self.threads
        ticks = _busy_ticks()
        if ticks is None:
            return self.threads
        machine, own = ticks[0] - self.last[1][0], ticks[1] - self.last[1][1]
        used = max(0.0, (machine - own) / CLOCK_TICKS / (now - self.last[0]))
        self.last = (now, ticks)
        self.others = KEEP * self.others + (1 - KEEP) * used
        wanted = max(1, min(self.most, round(self.most - self.others)))
        if wanted > self.threads:
            self.calm_since = now if self.calm_since is None else self.calm_since
            if now - self.calm_since < RAISE_AFTER_S:
                return self.threads
        self.calm_since = None
        if wanted != self.threads:
            self.threads = wanted
            self.set_threads(wanted)
        return self.threads
