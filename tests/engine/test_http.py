"""Security headers, caching and compression, checked on real responses."""
from __future__ import annotations

import gzip

import pytest
from flask import url_for

PATHS = ["/", "/no/such/page", "/static/css/site.css"]


@pytest.mark.parametrize("path", PATHS)
def test_every_response_has_security_headers(client, path):
    response = client.get(path)
    csp = response.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in csp and "'unsafe-eval'" not in csp
    assert "script-src 'self' 'wasm-unsafe-eval'" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"]
    assert "camera=()" in response.headers["Permissions-Policy"]


def test_embed_paths_may_be_framed_by_anyone(app):
    from engine.security import content_security_policy

    assert content_security_policy("/embed/chance-explorer").endswith("frame-ancestors *")
    assert content_security_policy("/mmlu/").endswith("frame-ancestors 'none'")


def test_static_urls_are_versioned_and_cached_for_a_year(app, client):
    with app.test_request_context():
        url = url_for("static", filename="css/site.css")
    assert "?v=" in url
    response = client.get(url)
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    # A stale or made-up version is served, but not promised to stay the same.
    stale = client.get("/static/css/site.css?v=000000000000")
    assert "immutable" not in stale.headers["Cache-Control"]


def test_pages_revalidate_with_etag_and_304(client):
    first = client.get("/")
    assert first.status_code == 200
    assert "no-cache" in first.headers["Cache-Control"]
    etag = first.headers["ETag"]
    again = client.get("/", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.data == b""
    assert "Content-Security-Policy" in again.headers


def test_text_bodies_are_gzipped_when_accepted(client):
    plain = client.get("/mmlu/")
    assert plain.status_code == 200
    zipped = client.get("/mmlu/", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped.headers["Vary"]
    assert gzip.decompress(zipped.data) == plain.data
    assert len(zipped.data) < len(plain.data) / 2
    assert zipped.headers["ETag"] != plain.headers["ETag"]
    revalidated = client.get("/mmlu/", headers={"Accept-Encoding": "gzip", "If-None-Match": zipped.headers["ETag"]})
    assert revalidated.status_code == 304


def test_unknown_path_is_a_friendly_404(client):
    response = client.get("/no/such/page")
    assert response.status_code == 404
    assert b"Traceback" not in response.data
    assert b"Back to the list" in response.data


def test_api_errors_are_json(client):
    response = client.get("/api/no-such-thing")
    assert response.status_code == 404
    assert response.is_json and response.json["error"]


def test_widget_pages_are_cached_by_url(app, client):
    def stored(fragment):  # widget states are kept apart from the pages (test_page_busting.py)
        return [key for key in app.extensions["caching"].states._items if fragment in key]

    first = client.get("/embed/mmlu/chance-explorer?n=123&score=0.3")
    assert first.status_code == 200 and len(stored("n=123")) == 1
    again = client.get("/embed/mmlu/chance-explorer?n=123&score=0.3")
    assert again.data == first.data and len(stored("n=123")) == 1
    client.get("/embed/mmlu/chance-explorer?n=124&score=0.3")
    assert len(stored("chance-explorer?n=12")) == 2


def test_the_model_state_is_never_frozen_into_a_cached_page(tmp_path):
    """Once the model has failed, the paper, the widget page and the embed all say so, although
    each was cached before (pages keep a marker where the live widget goes)."""
    from engine import create_app

    app = create_app({"TESTING": True})
    client = app.test_client()
    urls = ("/mmlu/", "/mmlu/widgets/live-scoring", "/embed/mmlu/live-scoring")
    before = {url: client.get(url) for url in urls}
    assert all('data-state="not loaded"' in r.get_data(as_text=True) for r in before.values())
    app.extensions["scoring"]._fail("the model file is unreadable")
    for url in urls:
        after = client.get(url, headers={"If-None-Match": before[url].headers["ETag"]})
        assert after.status_code == 200, url  # a changed state is a changed page, not a 304
        assert 'data-state="failed"' in after.get_data(as_text=True), url


def test_two_apps_in_one_process_keep_their_own_pages(real_app, fixture_app):
    real, fixture = real_app, fixture_app
    assert "Measuring Massive Multitask" in real.test_client().get("/").get_data(as_text=True)
    listed = fixture.test_client().get("/").get_data(as_text=True)
    assert "A Demonstration Paper" in listed and "Measuring Massive Multitask" not in listed
    assert real.extensions["caching"] is not fixture.extensions["caching"]


def test_page_cache_is_bounded_by_bytes():
    from engine.caching import BoundedCache

    cache = BoundedCache(max_bytes=10)
    for key in "abcdef":
        cache.put(key, b"xxxx", 4)
    assert cache.get("a") is None and cache.get("f") == b"xxxx"
    assert sum(size for _, size in cache._items.values()) <= 10


def test_the_production_server_warms_every_paper_before_it_listens():
    """app.py calls warm_up before serving: the first reader of /mmlu/ must not wait for the
    published runs to be summarised (test_proxy.py's slow-client test measured 2.7 s without it)."""
    from engine import create_app, warm_up

    app = create_app({"TESTING": True})
    assert app.extensions["widget_contexts"] == {}  # built on first use: a test app does not warm itself
    said = warm_up(app)
    slugs = set(app.extensions["documents"])
    assert said == ["/ 200", *(f"/{slug}/{query} 200" for slug in app.extensions["documents"]
                                for query in ("", "?sources=on"))]
    assert set(app.extensions["widget_contexts"]) == slugs and {"mmlu", "mmlu-pro", "scoring-lesson"} <= slugs
    assert "live_pairs" in app.extensions["widget_contexts"]["mmlu"]
