"""The download command, run against a copy of the release served on 127.0.0.1."""
from __future__ import annotations

import filecmp
import functools
import http.server
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from benchmarks.mmlu.server import data_dir
from engine.config import default_config

SHARED = data_dir(default_config())
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def served_release(tmp_path):
    """Pack the shared data the way data.tar is laid out (data/<split>/…) and serve it."""
    archive_dir = tmp_path / "www"
    archive_dir.mkdir()
    with tarfile.open(archive_dir / "data.tar", "w") as tar:
        for split in ("dev", "val", "test"):
            tar.add(SHARED / split, arcname=f"data/{split}")
        tar.add(SHARED / "subjects.csv", arcname="data/README.txt")  # stands in for files we skip
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(archive_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/data.tar"
    server.shutdown()


def run_download(*args):
    return subprocess.run([sys.executable, "-m", "engine", "mmlu", "download", *args],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # a download command and the whole dataset compared
def test_download_extracts_the_three_splits_and_writes_subjects(served_release, tmp_path):
    dest = tmp_path / "mmlu"
    result = run_download("--url", served_release, "--dest", str(dest))
    assert result.returncode == 0, result.stderr
    assert "wrote 57 subjects" in result.stdout
    assert "dev 285, val 1,531, test 14,042" in result.stdout
    assert (dest / "subjects.csv").read_text() == (SHARED / "subjects.csv").read_text()
    for split in ("dev", "val", "test"):
        names = sorted(p.name for p in (SHARED / split).iterdir())
        match, mismatch, errors = filecmp.cmpfiles(SHARED / split, dest / split, names, shallow=False)
        assert len(match) == 57 and not mismatch and not errors
    assert not (dest / "README.txt").exists()


@pytest.mark.slow  # two download commands
def test_download_refuses_to_overwrite_without_force(served_release, tmp_path):
    dest = tmp_path / "mmlu"
    assert run_download("--url", served_release, "--dest", str(dest)).returncode == 0
    again = run_download("--url", served_release, "--dest", str(dest))
    assert again.returncode == 1 and "--force" in again.stderr


def test_download_reports_an_unreachable_url_in_words(tmp_path):
    result = run_download("--url", "http://127.0.0.1:9/data.tar", "--dest", str(tmp_path / "x"))
    assert result.returncode == 2
    assert "could not download" in result.stderr and "Traceback" not in result.stderr
