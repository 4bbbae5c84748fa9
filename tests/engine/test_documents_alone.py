"""Each document works when it is the only one served, and a document folder runs its own code.

A content folder holding one document (a link to the real folder, so the same package is mounted)
must serve its page, glossary, widget gallery, every widget's page, embed and JSON, and its live
forms, with nothing borrowed from a document that is not there. A copy of a document elsewhere must
run the copy's Python, on the server and in the browser's wheel alike.
"""
from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from engine import create_app
from widgetkit.registry import mount_document

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(p.parent.name for p in (ROOT / "content").glob("*/paper.toml"))
# The live forms each document serves beside its widgets (their GET shows the form).
LIVE_FORMS = {"mmlu": ["/mmlu/run"], "mmlu-pro": ["/mmlu-pro/run"], "scoring-lesson": ["/scoring-lesson/overlap"]}


@pytest.mark.slow  # a copy of the site per document, every address fetched
@pytest.mark.parametrize("slug", DOCUMENTS)
def test_a_document_served_alone_answers_every_address(tmp_path, slug):
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / slug).symlink_to(ROOT / "content" / slug)
    app = create_app({"TESTING": True, "CONTENT_DIR": tmp_path / "content"})
    assert list(app.extensions["documents"]) == [slug]
    client = app.test_client()
    addresses = ["/", f"/{slug}/", f"/{slug}/glossary/", f"/{slug}/widgets/", *LIVE_FORMS.get(slug, [])]
    for name, widget in app.extensions["documents"][slug].widgets.items():
        addresses += [f"/{slug}/widgets/{name}", f"/embed/{slug}/{name}"]
        if widget.driver != "live":
            addresses.append(f"/api/widgets/{slug}/{name}")
    failed = {}
    for address in addresses:
        status = client.get(address).status_code
        if status != 200:
            failed[address] = status
    assert not failed


@pytest.fixture()
def demo_copy(tmp_path):
    """The fixture document copied elsewhere, its widget's title changed; the original is mounted
    again afterwards, so other tests import the fixture's own files."""
    fixture = ROOT / "tests" / "fixtures" / "content" / "demo"
    copy = tmp_path / "content" / "demo"
    shutil.copytree(fixture, copy)
    module = copy / "widgets" / "coin_flips.py"
    source = module.read_text(encoding="utf-8")
    assert 'title="Coin flips"' in source
    module.write_text(source.replace('title="Coin flips"', 'title="Coin flips, from the copy"'), encoding="utf-8")
    yield copy
    mount_document("demo", fixture)


def test_a_document_folder_elsewhere_runs_its_own_code_on_the_server_and_in_the_wheel(demo_copy):
    app = create_app({"TESTING": True, "CONTENT_DIR": demo_copy.parent})
    page = app.test_client().get("/demo/widgets/coin-flips").get_data(as_text=True)
    assert "Coin flips, from the copy" in page
    with app.app_context():
        from engine.wheel import build_wheel

        wheel = zipfile.ZipFile(io.BytesIO(build_wheel(app.extensions["documents"]).data))
    assert b"Coin flips, from the copy" in wheel.read("documents/demo/widgets/coin_flips.py")
