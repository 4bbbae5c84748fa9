"""Shared fixtures: the Flask app for in-process tests, and one real server for browser tests."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO_ROOT / "tests" / "artifacts"


@pytest.fixture(scope="session")
def app():
    from mmlu_explainer import create_app

    return create_app({"TESTING": True})


@pytest.fixture()
def client(app):
    return app.test_client()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def live_server():
    """Start `python app.py` (the production server) on a free port; yield its base URL."""
    port = free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = open(ARTIFACTS / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(port)],
        cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(base + "/", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the server did not start; see tests/artifacts/server.log")
            time.sleep(0.2)
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
