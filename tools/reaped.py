"""Run a command and end, and wait for, every process it leaves behind.

    python3 tools/reaped.py node --test tests/browser/page.test.mjs

This process becomes a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): a descendant whose parent
exits first (Chromium's renderers, when the browser process goes without waiting for them) is
handed to it instead of to init. Once the command exits, the descendants still running get
``GRACE_S`` seconds, then SIGKILL, and each is waited for. So nothing of a browser test outlives it,
and their CPU time counts in this process's children's time, where ``os.times()`` and the test
timeline (tests/conftest.py) read it. The exit status is the command's.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script, from anywhere

from tools.processes import process_table  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 5.0


def _children() -> list[int]:
    return [pid for pid, (parent, _) in process_table().items() if parent == os.getpid()]


def _reap_all() -> None:
    deadline = time.monotonic() + GRACE_S
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # none left
            return
        if pid:
            continue
        if time.monotonic() > deadline:
            for child in _children():
                try:
                    os.kill(child, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.02)


def main(argv: list[str]) -> int:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        code = subprocess.run(argv).returncode
    finally:
        _reap_all()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
