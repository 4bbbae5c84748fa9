"""Shared pieces of the benchmark scripts: start the real server, name the hardware, export a git ref.

The server launcher and the RSS reader live in tools/launcher.py (the tests use them too); they
are re-exported here so a benchmark needs one import.
"""
from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # benchmarks run as `python3 bench/x.py`, with only bench/ on sys.path
    sys.path.insert(0, str(REPO_ROOT))

from tools.launcher import Server, rss_mib, running_model_server, running_server  # noqa: E402

__all__ = ["REPO_ROOT", "Server", "exported", "hardware", "rss_mib", "running_model_server", "running_server"]


def hardware() -> str:
    """The CPU model and core count, so every printed figure names its machine."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


@contextlib.contextmanager
def exported(ref: str):
    """The repository's files at ``ref`` in a temporary folder (git archive: committed files only), for
    a benchmark that runs the code at a git ref beside this checkout's."""
    with tempfile.TemporaryDirectory(prefix="bench-exported-") as folder:
        archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        yield Path(folder)
