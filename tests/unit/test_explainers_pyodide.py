"""Run tests/unit/test_explainers.py and test_widgetkit.py inside Pyodide under Node, against the wheel the site serves.

This is the proof that the browser runs the same maths and the same widgets as the server: the
same test files, the same source (packed by engine.wheel), a different Python (WebAssembly).
"""
from __future__ import annotations

import importlib
import json
import subprocess
from pathlib import Path

import pytest
from conftest import needs_pyodide

from engine.config import default_config
from engine.documents import load_documents
from engine.wheel import build_wheel

pytestmark = [pytest.mark.slow, needs_pyodide]  # starts Pyodide under Node

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parents[1]


@pytest.mark.parametrize("module", ["test_explainers", "test_widgetkit"])
def test_unit_tests_pass_inside_pyodide(tmp_path, module):
    wheel = build_wheel(load_documents(default_config()["CONTENT_DIR"]))
    wheel_path = tmp_path / wheel.filename
    wheel_path.write_bytes(wheel.data)
    completed = subprocess.run(
        ["node", str(TESTS_DIR / "pyodide" / "run_in_pyodide.mjs"), str(wheel_path), str(TESTS_DIR / f"{module}.py")],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    print(f"Pyodide Python {report['python']} on {report['platform']}, loaded in {report['load_ms']} ms")

    assert report["platform"] == "emscripten"
    assert report["explainers_file"].endswith("site-packages/explainers/__init__.py")  # the wheel, not the source tree
    failures = [f"{r['name']}:\n{r['error']}" for r in report["results"] if not r["ok"]]
    assert not failures, "\n\n".join(failures)
    expected = [name for name in vars(importlib.import_module(module)) if name.startswith("test_")]
    assert [r["name"] for r in report["results"]] == expected
