"""Every document's widgets, found from their files (tests/conftest.py: widgets_found), on the server.

A widget drawn from its view (worker or server driver) reads fully without JavaScript on its page and
in its embed, answers its JSON API and is in its document's gallery; a live widget (the model's
forms) is checked with the model in tests/model and tests/browser.
"""
from __future__ import annotations

import re

import pytest
from conftest import widgets_found

from content_helpers import summary_of

DRAWN = [(slug, name) for slug, name, driver in widgets_found() if driver != "live"]
TEXTAREA = re.compile(r"<textarea\b.*?</textarea>", re.S)


@pytest.mark.parametrize(("slug", "name"), DRAWN, ids=[f"{slug}/{name}" for slug, name in DRAWN])
def test_every_drawn_widget_reads_without_javascript(client, slug, name):
    for url in (f"/{slug}/widgets/{name}", f"/embed/{slug}/{name}"):
        response = client.get(url)
        assert response.status_code == 200, url
        page = response.get_data(as_text=True)
        assert '<svg class="widget-figure"' in page, url
        assert summary_of(page), f"{url}: the text summary is empty"
        assert '<form class="widget-controls" method="get"' in page, url  # works without JavaScript
        # CSP: no inline style attribute (a text area's content is text the reader may edit, not markup)
        assert not re.search(r'\sstyle="', TEXTAREA.sub("", page)), url
    api = client.get(f"/api/widgets/{slug}/{name}")
    assert api.status_code == 200 and api.get_json()["state"] is not None


@pytest.mark.parametrize("slug", sorted({slug for slug, _, _ in widgets_found()}))
def test_every_gallery_lists_every_widget_of_its_document(client, slug):
    page = client.get(f"/{slug}/widgets/").get_data(as_text=True)
    assert [name for s, name, _ in widgets_found() if s == slug and f"/{slug}/widgets/{name}" not in page] == []
