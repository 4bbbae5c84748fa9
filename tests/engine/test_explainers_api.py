"""The math core over HTTP: /api/explainers, the Pyodide files and the browser's wheel."""
from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from conftest import needs_pyodide

import explainers
from engine.config import default_config
from engine.documents import load_documents
from engine.wheel import build_wheel

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_index_lists_public_functions_and_runtime(client):
    body = client.get("/api/explainers").get_json()
    assert set(body["functions"]) == set(explainers.PUBLIC)
    params = body["functions"]["confidence_interval"]["parameters"]
    assert params == [{"name": "p"}, {"name": "n"}, {"name": "level", "default": 0.95},
                      {"name": "method", "default": "normal"}]
    runtime = body["runtime"]
    if needs_pyodide.args[0]:  # without node_modules/pyodide the index names no runtime module
        assert runtime["pyodide_module"] is None
    else:
        assert runtime["pyodide_module"].endswith("/pyodide.mjs")
    assert runtime["wheel"].endswith("-py3-none-any.whl")


def test_post_keyword_arguments(client):
    response = client.post("/api/explainers/confidence_interval", json={"p": 0.3, "n": 100, "method": "wilson"})
    assert response.status_code == 200
    assert response.get_json() == {"result": list(explainers.confidence_interval(0.3, 100, method="wilson"))}


def test_post_lists_and_objects(client):
    body = {"confidences": [0.9, 0.9, 0.95, 0.85, 0.9, 0.4, 0.35, 0.45, 0.4, 0.4],
            "correct": [1, 1, 1, 0, 0, 1, 0, 1, 0, 0], "bins": 2}
    assert round(client.post("/api/explainers/rms_calibration_error", json=body).get_json()["result"], 3) == 0.212
    result = client.post("/api/explainers/predict", json={"letter_probs": {"A": 0.1, "B": 0.2, "C": 0.6}})
    assert result.get_json() == {"result": "C"}


def test_get_with_query_parameters(client):
    assert client.get("/api/explainers/standard_error?p=0.25&n=100").get_json() == {
        "result": explainers.standard_error(0.25, 100)
    }
    assert client.get("/api/explainers/chance_band?n=100&method=exact").get_json() == {"result": [0.17, 0.34]}
    assert client.get("/api/explainers/paper_figures").status_code == 404  # paper data is not math
    listed = client.get("/api/explainers").get_json()["functions"]
    assert "widget_view" not in listed and "paper_figures" not in listed and set(listed) == set(explainers.PUBLIC)


@pytest.mark.parametrize(
    ("method", "url", "body", "named"),
    [
        ("get", "/api/explainers/standard_error?p=abc&n=100", None, "p"),
        ("get", "/api/explainers/standard_error?p=0.2&n=1.5", None, "n"),
        ("get", "/api/explainers/standard_error?p=0.2&n=100&n=200", None, "n"),
        ("get", "/api/explainers/standard_error?p=0.2", None, "'n'"),
        ("get", "/api/explainers/standard_error?p=2&n=10", None, "p"),
        ("get", "/api/explainers/standard_error?p=nan&n=10", None, "p"),
        ("post", "/api/explainers/standard_error", {"p": 0.2, "n": 0}, "n"),
        ("post", "/api/explainers/standard_error", {"p": 0.2, "n": 10, "extra": 1}, "'extra'"),
        ("post", "/api/explainers/standard_error", {"p": "0.2", "n": 10}, "p"),
        ("post", "/api/explainers/accuracy", {"predictions": ["A"], "keys": ["A", "B"]}, "predictions and keys"),
        ("post", "/api/explainers/rms_calibration_error", {"confidences": [0.5], "correct": [1], "bins": 4}, "bins"),
        ("post", "/api/explainers/confidence_interval", {"p": 0.2, "n": 10, "method": "magic"}, "method"),
    ],
)
def test_bad_arguments_are_400_naming_the_argument(client, method, url, body, named):
    response = client.get(url) if method == "get" else client.post(url, json=body)
    assert response.status_code == 400
    assert named in response.get_json()["error"]


def test_a_function_of_lists_answers_get_with_405_saying_post(client):
    """Lists cannot be written in a query string: such a function is POST only, as /api/openapi.json says."""
    response = client.get("/api/explainers/accuracy?predictions=A&keys=A")
    assert response.status_code == 405 and response.headers["Allow"] == "OPTIONS, POST"
    assert "POST its arguments" in response.get_json()["error"]
    assert client.options("/api/explainers/accuracy").headers["Allow"] == "OPTIONS, POST"
    assert "GET" in client.options("/api/explainers/standard_error").headers["Allow"]


@pytest.mark.parametrize("body", [b"[1, 2]", b"3", b"not json", b'"text"'])
def test_body_that_is_not_a_json_object_is_400(client, body):
    response = client.post("/api/explainers/standard_error", data=body, content_type="application/json")
    assert response.status_code == 400
    assert "JSON object" in response.get_json()["error"]


def test_deeply_nested_body_is_400(client):
    body = '{"p": ' + "[" * 30000 + "]" * 30000 + ', "n": 10}'
    response = client.post("/api/explainers/standard_error", data=body, content_type="application/json")
    assert response.status_code == 400
    assert "nested" in response.get_json()["error"]


def test_body_must_be_declared_json(client):
    response = client.post("/api/explainers/standard_error", data="p=0.2&n=10",
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert "application/json" in response.get_json()["error"]


def test_oversized_body_is_refused(client, app):
    big = {"values": [0.5] * (app.config["MAX_CONTENT_LENGTH"] // 4)}
    assert client.post("/api/explainers/plain_mean", json=big).status_code == 413


@pytest.mark.parametrize("name", ["no_such_thing", "_checks", "run_batch", "call_public", "__init__", "json"])
def test_unknown_or_private_functions_are_404(client, name):
    response = client.post(f"/api/explainers/{name}", json={})
    assert response.status_code == 404
    assert response.get_json()["error"]


@needs_pyodide
def test_pyodide_files_are_served_with_their_types_and_cached(client):
    version = json.loads((REPO_ROOT / "node_modules/pyodide/package.json").read_text())["version"]
    for name, mime in [("pyodide.mjs", "text/javascript"), ("pyodide.asm.wasm", "application/wasm"),
                       ("python_stdlib.zip", "application/zip"), ("pyodide-lock.json", "application/json")]:
        response = client.get(f"/pyodide/{version}/{name}")
        assert response.status_code == 200, name
        assert response.mimetype == mime
        assert "immutable" in response.headers["Cache-Control"] and "max-age=31536000" in response.headers["Cache-Control"]


@needs_pyodide
@pytest.mark.parametrize("path", ["/pyodide/0.0.0/pyodide.mjs", "/pyodide/{v}/README.md", "/pyodide/{v}/package.json",
                                  "/pyodide/{v}/console.html", "/pyodide/{v}/missing.js"])
def test_other_pyodide_paths_are_404(client, path):
    version = json.loads((REPO_ROOT / "node_modules/pyodide/package.json").read_text())["version"]
    assert client.get(path.format(v=version)).status_code == 404


def test_served_wheel_is_built_from_the_current_source(client):
    url = client.get("/api/python-runtime").get_json()["wheel"]
    assert client.get("/api/explainers").get_json()["runtime"]["wheel"] == url  # the API's index still names it
    response = client.get(url)
    assert response.status_code == 200 and "immutable" in response.headers["Cache-Control"]
    with zipfile.ZipFile(io.BytesIO(response.data)) as wheel:
        names = set(wheel.namelist())
        for package in ("explainers", "widgetkit", "documents/mmlu/widgets", "benchmarks/mmlu"):
            for source in (REPO_ROOT / package).glob("*.py"):
                assert wheel.read(f"{package}/{source.name}") == source.read_bytes()
        assert not [name for name in names if "/server/" in name or name.endswith("/hooks.py")]  # the server side stays here
        # The wheel's version is a hash of what it packs (engine/wheel.py), named in its file name too.
        version = url.rsplit("/", 1)[1].split("-")[1]
        assert version.startswith("0+") and f"browser_python-{version}.dist-info/WHEEL" in names
        record = wheel.read(f"browser_python-{version}.dist-info/RECORD").decode()
    assert "explainers/stats.py,sha256=" in record and "benchmarks/mmlu/figures.py,sha256=" in record
    assert client.get(url.replace("/wheels/", "/wheels/0")).status_code == 404


def test_wheel_build_is_reproducible():
    papers = load_documents(default_config()["CONTENT_DIR"])
    first, second = build_wheel(papers), build_wheel(papers)
    assert first.data == second.data
    assert first.digest == hashlib.sha256(first.data).hexdigest()[:16]


def test_the_wheels_version_changes_with_what_it_packs():
    from engine.wheel import browser_files, wheel_version

    files = browser_files(load_documents(default_config()["CONTENT_DIR"]))
    changed = [(path, data + b"\n") if path == "explainers/stats.py" else (path, data) for path, data in files]
    assert wheel_version(files) == wheel_version(list(files)) != wheel_version(changed)


def test_math_core_page_renders_every_example_on_the_server(client, app):
    math_examples = app.extensions["documents"]["mmlu"].hooks.math_examples

    html = client.get("/math-core").get_data(as_text=True)
    assert html.count("data-explainer-row") == len(math_examples())
    for shown in ("0.0433", "[0.1651, 0.3349]", "[0.17, 0.34]", "0.375", "44.17", "0.2121", "0.005906"):
        assert f"<code>{shown}</code>" in html
    assert "<script>" not in html and "style=" not in html
