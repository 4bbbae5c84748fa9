"""What adding a benchmark costs (docs/benchmarks.md, "Adding a benchmark"): the toy benchmark of
tests/fixtures/benchmarks/toy/ (a task file, a reader with its API and command, a CSV) and the
document of tests/fixtures/toy-content/toy-quiz/ that scores it, and nothing outside them. Mounted
as ``benchmarks.toy`` and served alone, the toy is listed, browsed, scored live on its own page and
through its API, and evaluated from the command line, all by the shared layers.

The model is a made-up OpenAI-style server (tests/fake_model_server.py): what is checked here is the
plumbing a new benchmark gets, not the numbers (those are the real benchmarks' tests)."""
from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

import pytest

import benchmarks
from benchmarks import registry
from fake_model_server import FakeServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOY = FIXTURES / "benchmarks" / "toy"
TOY_DOCUMENT = FIXTURES / "toy-content" / "toy-quiz"


def _forget_the_toy() -> None:
    for name in [m for m in sys.modules if m == "benchmarks.toy" or m.startswith("benchmarks.toy.")]:
        del sys.modules[name]
    for cached in (registry.tasks, registry._found, registry.of_group_field, registry.harness_prefixes):
        cached.cache_clear()


@pytest.fixture(scope="module")
def toy():
    """The toy benchmark mounted beside the real ones (as a package installed next to them would
    be), then taken away again, so other tests see only the real benchmarks."""
    benchmarks.__path__.append(str(TOY.parent))
    _forget_the_toy()
    yield registry.task("toy")
    benchmarks.__path__.remove(str(TOY.parent))
    _forget_the_toy()


@pytest.fixture(scope="module")
def fake_server():
    server = FakeServer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def toy_app(toy, fake_server):
    from engine import create_app

    return create_app({"TESTING": True, "CONTENT_DIR": TOY_DOCUMENT.parent, "MODEL_SERVER_URL": fake_server.url,
                       "PAGE_RENDER_BUDGET_S": 0})


def test_the_toy_costs_its_task_its_reader_and_its_document(toy):
    """The files that make the toy are all under its two folders; the registry finds it by itself."""
    assert toy.name in registry.tasks() and toy.group_field in registry.group_fields()
    assert registry.server("toy").COMMANDS["evaluate"].module == "benchmarks.toy.server.evaluate"
    files = sorted(p.relative_to(FIXTURES).as_posix() for folder in (TOY, TOY_DOCUMENT)
                   for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert files == [
        "benchmarks/toy/__init__.py", "benchmarks/toy/questions.csv", "benchmarks/toy/server/__init__.py",
        "benchmarks/toy/server/evaluate.py", "benchmarks/toy/task.py",
        "toy-content/toy-quiz/glossary.toml", "toy-content/toy-quiz/hooks.py", "toy-content/toy-quiz/numbers.toml",
        "toy-content/toy-quiz/paper.toml", "toy-content/toy-quiz/sections/01-questions.md",
        "toy-content/toy-quiz/server/__init__.py", "toy-content/toy-quiz/server/run-page.html",
        "toy-content/toy-quiz/server/run-results.html", "toy-content/toy-quiz/server/run_page.py"]


def test_the_toy_document_served_alone_lists_browses_and_scores(toy_app):
    client = toy_app.test_client()
    assert list(toy_app.extensions["documents"]) == ["toy-quiz"]
    assert client.get("/toy-quiz/").status_code == 200
    assert client.get("/api/toy/questions").get_json() == {"topics": [
        {"name": "arithmetic", "test": 3, "dev": 2}, {"name": "colours", "test": 2, "dev": 1}]}
    assert client.get("/api/toy/questions/colours?index=1").get_json()["question"] == "What colour is snow?"
    missing = client.get("/api/toy/questions/geography")
    assert missing.status_code == 404 and "unknown topic 'geography'" in missing.get_json()["error"]

    scored = client.post("/api/toy/score", json={"topic": "arithmetic", "index": 2, "shots": 1})
    assert scored.status_code == 200, scored.get_json()
    result = scored.get_json()
    assert result["question"]["question"] == "What is 2 x 6?" and result["key"] == "D"
    assert set(result["probabilities"]) == {"A", "B", "C", "D"} and result["prediction"] in "ABCD"
    wrong = client.post("/api/toy/score", json={"topic": "arithmetic", "index": 3})
    assert wrong.status_code == 400 and wrong.get_json()["field"] == "index"

    operations = client.get("/api/openapi.json").get_json()["paths"]
    assert {"/api/toy/questions", "/api/toy/questions/{topic}", "/api/toy/score"} <= set(operations)


def test_the_toy_page_scores_a_question_without_javascript(toy_app):
    client = toy_app.test_client()
    page = client.get("/toy-quiz/run")
    assert page.status_code == 200
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True)).group(1)
    answered = client.post("/toy-quiz/run", data={"topic": "colours", "number": "1", "csrf_token": token})
    text = answered.get_data(as_text=True)
    assert answered.status_code == 200 and "What the model said" in text
    refused = client.post("/toy-quiz/run", data={"topic": "colours", "number": "9", "csrf_token": token})
    assert refused.status_code == 400 and "index must be a whole number from 0 to 1" in refused.get_data(as_text=True)


def test_the_toy_is_evaluated_by_the_shared_command(toy, fake_server, tmp_path, capsys):
    from benchmarks.__main__ import main

    out = tmp_path / "toy.jsonl.gz"
    assert main(["toy", "evaluate", "--server", fake_server.url, "--shots", "1", "--out", str(out),
                 "--no-progress", "--workers", "1"]) == 0
    rows = [json.loads(line) for line in gzip.open(out, "rt")]
    assert sorted((r["topic"], r["index"]) for r in rows) == [
        ("arithmetic", 0), ("arithmetic", 1), ("arithmetic", 2), ("colours", 0), ("colours", 1)]
    assert {r["method"] for r in rows} == {"letter"} and all(r["shots"] == 1 for r in rows)
    assert "5 rows" in capsys.readouterr().out
