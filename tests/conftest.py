"""Shared fixtures, one of each expensive thing per session (per xdist worker):

- `real_app` / `fixture_app`: one app per content folder (the real content/, and tests/fixtures/content
  with the demo document), left as built; `app` and `client`: one more real app that tests may change
  (its model may wake). Nothing builds an app at import.
- `loaded_model`: the real language model, loaded once; `app_with_model(config, loaded_model)` gives an
  app whose scoring service already holds it (no second load); `mmlu_data`: the real MMLU reader.
- `live_server`: one `python app.py` per xdist worker for the browser tests and the pressure test,
  started by the first test that needs it.
- `documents()`: the slugs of the documents found (content/*/paper.toml), and `widgets_found()`, their
  widgets, for parametrising.

The suite runs on both cores (pyproject.toml: `-n auto --dist loadgroup`, longest tests first).
"""
from __future__ import annotations

import contextlib
import functools
import gc
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import settings

from tools.launcher import running_server
from widgetkit.registry import mount_document

REPO_ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO_ROOT / "tests" / "artifacts"
CONTENT = REPO_ROOT / "content"
PYODIDE = REPO_ROOT / "node_modules" / "pyodide"
# Every test client is 127.0.0.1, and the suite renders thousands of pages from it: the render budget
# (engine/caching.py, PAGE_RENDER_BUDGET_S) is off for the suite's apps and the servers it starts;
# tests/engine/test_page_busting.py sets it where it is tested.
os.environ.setdefault("PAGE_RENDER_BUDGET_S", "0")
# Nor does a server the suite starts build the widgets' packages (engine/site_packages.py, a minute of
# CPU per version); tests/engine/test_site_packages.py builds the fixture's where they are tested.
os.environ.setdefault("PACKAGES_AT_START", "0")

# The documents' Python is imported as documents.<slug> (widgetkit/registry.py): mounted here too, so
# test modules can import a document's widgets and figures as the app does.
for _toml in sorted(CONTENT.glob("*/paper.toml")):
    mount_document(_toml.parent.name, _toml.parent)


def documents() -> list[str]:
    """The slugs of the documents in content/, as served (the folder names)."""
    return sorted(p.parent.name for p in CONTENT.glob("*/paper.toml"))


@functools.cache
def widgets_found() -> list[tuple[str, str, str]]:
    """(document slug, widget name, driver) of every widget in content/, loaded as the app loads them
    (engine.documents.load_document: paper.toml's order first), for parametrising."""
    from engine.documents import load_document

    return [(slug, name, widget.driver) for slug in documents()
            for name, widget in load_document(CONTENT / slug).widgets.items()]


def lazy_import(name: str):
    """The module ``name``, imported when a test first uses it: every worker imports every test module
    to collect it, and scipy.stats alone takes most of a second to import (the tests that use it
    run on one worker, in the xdist group "scipy")."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


needs_pyodide = pytest.mark.skipif(
    not (PYODIDE / "package.json").is_file(),
    reason="node_modules/pyodide is missing: run `npm ci` (tests/run.sh does) for the Pyodide tests")


# The longest tests first (the browser files, then what loads the model or is marked slow), so that
# xdist's dynamic scheduling (pyproject.toml: --dist loadgroup) hands them out while the
# short ones are still waiting to fill the gaps: both cores stay busy to the end.
_COST = ("browser", "model", "slow")


def _cost_rank(item) -> int:
    names = {mark.name for mark in item.iter_markers()}
    return next((rank for rank, name in enumerate(_COST) if name in names), len(_COST))


# Property tests (hypothesis, and schemathesis's OpenAPI fuzzing) draw 100 examples each in the whole
# suite and 20 on the fast path (a run that deselects the slow tests), which they otherwise spend a
# quarter of their time on. Both draw the same examples on every run (derandomize), so a change is
# judged on the same inputs and CI cannot fail on a draw it never made before; fresh draws, many
# more, are a run of their own: python3 -m pytest --hypothesis-profile=explore -m "not browser".
settings.register_profile("whole-suite", max_examples=100, deadline=None, derandomize=True)
settings.register_profile("fast-path", max_examples=20, deadline=None, derandomize=True)
settings.register_profile("explore", max_examples=500, deadline=None)


# Python's cycle collector reads every tracked object on each full collection: a worker's modules,
# apps, rendered documents and datasets (about half a million objects) were read 16 times in a
# fast-path run and 5 times more at its end (pytest's check for unraisable exceptions), about 3 of
# each worker's 25 CPU-seconds. What survives a full collection is alive, and in a test process
# nearly all of it stays so (modules, session fixtures): it is frozen (gc.freeze), so the next
# collections read only what was made since. A survivor that later dies in a reference cycle is
# freed when the worker exits.
def _freeze_survivors(phase: str, info: dict) -> None:
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


def pytest_configure(config):
    if not config.getoption("hypothesis_profile", None):  # --hypothesis-profile=explore wins
        settings.load_profile("fast-path" if "not slow" in (config.option.markexpr or "") else "whole-suite")
    gc.callbacks.append(_freeze_survivors)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_cost_rank)  # stable: within a rank, pytest's own order (fixtures set up once)


def worker_id() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


# TEST_TIMELINE=<file>: each worker appends one line per test (worker, start, wall seconds, CPU seconds
# of the worker and all its child processes: node and Chromium (tools/reaped.py waits for its
# renderers), the live server, subprocesses; test id),
# so that `python3 tools/test_timeline.py <file>` can show where the cores idle. Off by default.
def _cpu_seconds() -> float:
    """This process's CPU time and its waited-for children's, and that of its live descendants and of
    the children they waited for (Linux: Chromium's renderers end inside the test, reaped by Chromium)."""
    from tools.processes import descendants, process_table

    times = os.times()
    table = process_table()
    return (times.user + times.system + times.children_user + times.children_system
            + sum(table[pid][1] for pid in descendants(os.getpid(), table)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("TEST_TIMELINE")
    if not path:
        yield
        return
    start, before = time.time(), _cpu_seconds()
    yield
    cpu = _cpu_seconds() - before
    with open(path, "a", encoding="utf-8") as timeline:
        timeline.write(f"{worker_id()}\t{start:.3f}\t{time.time() - start:.3f}\t{cpu:.3f}\t{item.nodeid}\n")


# -- the apps ---------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def real_app():
    """The site on the real content/ (shared: do not change its config in a test)."""
    from content_helpers import real_app

    return real_app()


@pytest.fixture(scope="session")
def fixture_app():
    """The site on tests/fixtures/content (the demo document)."""
    from content_helpers import fixture_app

    return fixture_app()


@pytest.fixture(scope="session")
def app():
    """A second app on the real content/, for tests that may change its state (wake its model, fill
    its caches): `real_app` stays as built, for the content checks."""
    from engine import create_app

    return create_app({"TESTING": True})


@pytest.fixture()
def client(app):
    return app.test_client()


# -- the model --------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def loaded_model():
    """The real default model (CPU, one thread), loaded once per session (per worker)."""
    import fcntl

    from engine.config import default_config
    from livescoring.model import ModelSettings, load

    settings = ModelSettings.from_config({**default_config(), "SCORER_DEVICE": "cpu", "SCORER_THREADS": 1})
    if settings.cache_dir is None:
        return load(settings)
    # On a clean machine the first load converts the GGUF into the cache: one worker converts while
    # the other waits, then reads the converted copy (the product's cache is safe without this, but
    # two conversions at once cost both cores).
    try:
        Path(settings.cache_dir).mkdir(parents=True, exist_ok=True)
        lock = open(Path(settings.cache_dir) / ".tests-loading.lock", "w")  # noqa: SIM115 - closed below
    except OSError:  # a read-only cache dir: load without the lock
        return load(settings)
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return load(settings)


@pytest.fixture(scope="session")
def mmlu_data():
    """The real MMLU dataset (MMLU_DATA_DIR), one reader per session (per worker)."""
    from benchmarks.mmlu.server import data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from engine.config import default_config

    return MMLUData(data_dir(default_config()))


def app_with_model(config: dict, loaded):
    """A new real app whose scoring service is ready with `loaded` (the session's model), as if
    SCORER_LOAD_AT_START had loaded it: the service's worker thread runs, the model is not loaded again."""
    from engine import create_app

    app = create_app({"TESTING": True, "SCORER_THREADS": 1, **config, "SCORER_LOAD_AT_START": False})
    service = app.extensions["scoring"]
    with mock.patch("livescoring.worker.load", lambda settings: loaded):
        service.start()
        assert service.wait_ready(600), service.status()["message"]
    return app


# -- the live server --------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def live_server(model_server):
    """Start `python app.py` (the production server) on a free port; yield its base URL.

    The server's output goes to tests/artifacts/server[-<worker>].log (named in the error if it does not start).
    """
    name = "server.log" if worker_id() == "main" else f"server-{worker_id()}.log"
    # One torch thread: the browser and the tests themselves need the machine's other core.
    with running_server(log_path=ARTIFACTS / name, env={"SCORER_THREADS": "1", "MODEL_SERVER_URL": model_server}) as server:
        yield server.url


@pytest.fixture(scope="session")
def model_server(tmp_path_factory):
    """The model server (`python -m livescoring serve`, one torch thread) shared by the whole run: the
    first worker to ask starts it, the others find its address in the run's shared folder, and the
    last one to finish stops it. Yields its base URL. Its output: tests/artifacts/model-server.log."""
    import fcntl
    import json
    import signal

    from tools.launcher import _wait_until_ready, free_port

    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if worker_id() != "main" else shared  # xdist's workers' folders share a parent
    state = shared / "model-server.json"

    def locked(change):
        with open(shared / "model-server.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            found = json.loads(state.read_text()) if state.exists() else None
            found = change(found)
            state.write_text(json.dumps(found))
            return found

    def join(found):
        if found is not None and found["users"] > 0:
            return {**found, "users": found["users"] + 1}
        port = free_port()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        with open(ARTIFACTS / "model-server.log", "w") as log:
            process = subprocess.Popen([sys.executable, "-m", "livescoring", "serve", "--port", str(port), "--threads",
                                        "1"], cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        _wait_until_ready(f"http://127.0.0.1:{port}/health", process, ARTIFACTS / "model-server.log", 300)
        return {"url": f"http://127.0.0.1:{port}", "pid": process.pid, "users": 1}

    def leave(found):
        found = {**found, "users": found["users"] - 1}
        if found["users"] == 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(found["pid"], signal.SIGTERM)
        return found

    yield locked(join)["url"]
    locked(leave)


def run_form_token(client, page: str = "/mmlu/run") -> dict:
    """The hidden CSRF field of a form page (the /mmlu/run form by default) as this client would get
    it: {name: token}."""
    import re

    html = client.get(page).get_data(as_text=True)
    match = re.search(r'<input type="hidden" name="(csrf_token)" value="([0-9a-f]+)">', html)
    assert match, "the run form carries no CSRF token"
    return {match.group(1): match.group(2)}
