"""A tiny test runner for Pyodide, where pytest is not available: call every test_* function of a module.

Test modules run this way use only plain asserts and the standard library.
"""
from __future__ import annotations

import importlib
import json
import sys
import traceback


def run_module(name: str) -> str:
    """Import the module, call its test_* functions in source order, and report each as JSON."""
    module = importlib.import_module(name)
    tests = [(n, f) for n, f in vars(module).items() if n.startswith("test_") and callable(f)]
    results = []
    for test_name, test in tests:
        try:
            test()
            results.append({"name": test_name, "ok": True})
        except Exception:  # a failing assert or an unexpected error: both are a failed test
            results.append({"name": test_name, "ok": False, "error": traceback.format_exc(limit=3)})
    explainers = sys.modules.get("explainers")
    return json.dumps({
        "python": sys.version.split()[0],
        "platform": sys.platform,
        "explainers_file": getattr(explainers, "__file__", None),
        "results": results,
    })
