"""livescoring/core_share.py: a pass runs on the cores other processes leave, at least one."""
from __future__ import annotations

from livescoring import core_share


class Machine:
    """/proc's counts as the model thread would see them: ``tick(others, own)`` advances one second
    in which the other processes used ``others`` cores and this process ``own``."""

    def __init__(self, monkeypatch):
        self.now, self.busy, self.own = 1000.0, 0, 0
        monkeypatch.setattr(core_share, "_busy_ticks", lambda: (self.busy, self.own))
        monkeypatch.setattr(core_share.time, "monotonic", lambda: self.now)

    def tick(self, others: float, own: float) -> None:
        self.now += 1
        self.busy += round((others + own) * core_share.CLOCK_TICKS)
        self.own += round(own * core_share.CLOCK_TICKS)


def test_the_threads_follow_the_cores_other_processes_leave(monkeypatch):
    machine, set_to = Machine(monkeypatch), []
    share = core_share.CoreShare(2, set_to.append)
    machine.tick(others=0.1, own=2.0)  # alone: its own two threads' time is not the others'
    assert share.before_pass() == 2 and set_to == []
    for _ in range(3):
        machine.tick(others=1.8, own=0.2)  # page readers hold the cores
        share.before_pass()
    assert share.threads == 1 and set_to == [1]
    for _ in range(4):
        machine.tick(others=0.05, own=1.0)
        share.before_pass()
    assert share.threads == 2 and set_to == [1, 2]


def test_more_threads_only_after_a_calm_while_fewer_at_once(monkeypatch):
    machine, set_to = Machine(monkeypatch), []
    share = core_share.CoreShare(2, set_to.append)
    for _ in range(3):
        machine.tick(others=1.8, own=0.2)
        share.before_pass()
    assert share.threads == 1
    # The page readers' use dips for a look: a pass on two threads now would wait on the core they take back.
    machine.now += core_share.RAISE_AFTER_S / 4
    machine.busy += round(0.25 * core_share.RAISE_AFTER_S / 4 * core_share.CLOCK_TICKS)
    share.others = 0.0
    assert share.before_pass() == 1
    machine.tick(others=1.9, own=0.1)  # and they are back: the wait starts again
    assert share.before_pass() == 1 and share.calm_since is None
    for _ in range(3):  # the cores free for longer than RAISE_AFTER_S: two threads
        machine.tick(others=0.0, own=1.0)
        share.before_pass()
    assert share.threads == 2 and set_to == [1, 2]
    machine.tick(others=1.8, own=0.2)
    machine.tick(others=1.8, own=0.2)
    share.before_pass()
    assert share.threads == 1 and set_to == [1, 2, 1]  # fewer at the first look that finds the cores taken


def test_one_thread_configured_or_no_proc_changes_nothing(monkeypatch):
    machine, set_to = Machine(monkeypatch), []
    one = core_share.CoreShare(1, set_to.append)
    machine.tick(others=0.0, own=1.0)
    assert one.before_pass() == 1
    monkeypatch.setattr(core_share, "_busy_ticks", lambda: None)
    blind = core_share.CoreShare(4, set_to.append)
    machine.tick(others=3.0, own=1.0)
    assert blind.before_pass() == 4 and set_to == []


def test_the_real_proc_is_read():
    ticks = core_share._busy_ticks()
    assert ticks is None or (ticks[0] >= ticks[1] >= 0)
