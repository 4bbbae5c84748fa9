"""Run each headless-Chromium test file (tests/browser/*.test.mjs) against the live server.

The browser tests are written for Node's test runner with playwright-core driving Debian's
/usr/bin/chromium; this wrapper gives each file the server's URL and reports its output.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

BROWSER_DIR = Path(__file__).resolve().parent / "browser"
FILES = sorted(BROWSER_DIR.glob("*.test.mjs"))


@pytest.mark.parametrize("test_file", FILES, ids=[f.name for f in FILES])
def test_in_chromium(live_server, test_file):
    env = dict(os.environ, BASE_URL=live_server)
    result = subprocess.run(
        ["node", "--test", "--test-reporter=spec", str(test_file)],
        cwd=BROWSER_DIR.parent.parent, env=env, capture_output=True, text=True, timeout=600,
    )
    print(result.stdout[-20000:])
    print(result.stderr[-5000:])
    assert result.returncode == 0, f"{test_file.name} failed:\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
