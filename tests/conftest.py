"""Shared fixtures: the Flask app for in-process tests, and one real server for browser tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from tools.launcher import running_server
from widgetkit.registry import mount_document

REPO_ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO_ROOT / "tests" / "artifacts"

# The documents' Python is imported as documents.<slug> (widgetkit/registry.py): mounted here too, so
# test modules can import a document's widgets and figures as the app does.
for _toml in sorted((REPO_ROOT / "content").glob("*/paper.toml")):
    mount_document(_toml.parent.name, _toml.parent)


@pytest.fixture(scope="session")
def app():
    from engine import create_app

    return create_app({"TESTING": True})


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def live_server():
    """Start `python app.py` (the production server) on a free port; yield its base URL.

    The server's output goes to tests/artifacts/server.log (named in the error if it does not start).
    """
    # One torch thread: the browser and the tests themselves need the machine's other core.
    with running_server(log_path=ARTIFACTS / "server.log", env={"SCORER_THREADS": "1"}) as server:
        yield server.url


def run_form_token(client, page: str = "/mmlu/run") -> dict:
    """The hidden CSRF field of a form page (the /mmlu/run form by default) as this client would get
    it: {name: token}."""
    import re

    html = client.get(page).get_data(as_text=True)
    match = re.search(r'<input type="hidden" name="(csrf_token)" value="([0-9a-f]+)">', html)
    assert match, "the run form carries no CSRF token"
    return {match.group(1): match.group(2)}
