"""Cache-busting (issue 41, item 2): made-up query parameters were each a fresh render of a page
(``/mmlu/?sources=on&x=N``, 0.25-0.45 CPU-s) and a new entry in the page store, evicting the real
pages. Pages are now kept under the parameters their view reads; ``?sources=on`` is rendered at
warm-up; and a client that has spent its render budget gets 429 while kept pages answer everyone.
Renders are counted (``render_template`` calls), not timed; bench/page_busting.py has the latencies."""
from __future__ import annotations

import contextlib
from unittest import mock

import pytest

from content_helpers import FIXTURE_CONFIG
from engine import create_app, pages, warm_up, widgets

JUNK = "x7q-junk"


@contextlib.contextmanager
def counting_renders():
    """The number of templates the page and widget views render while the block runs (a list of one)."""
    count = [0]

    def wrapping(real):
        def counted(*args, **kwargs):
            count[0] += 1
            return real(*args, **kwargs)
        return counted

    with mock.patch.object(pages, "render_template", wrapping(pages.render_template)), \
            mock.patch.object(widgets, "render_template", wrapping(widgets.render_template)):
        yield count


def fresh_app(**config):
    """The demo document's site with empty caches (each test's counts start from nothing)."""
    return create_app({**FIXTURE_CONFIG, **config})


def as_client(app, address: str):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


def test_junk_parameters_are_served_the_kept_page_without_a_render_or_a_new_entry():
    app = fresh_app()
    client, store = app.test_client(), app.extensions["caching"]
    first = client.get("/demo/")
    kept = len(store.pages)
    with counting_renders() as renders:
        busted = [client.get(f"/demo/?x={n}&{JUNK}={n}") for n in range(20)]
        busted.append(client.get(f"/demo/?sources=off&utm_source={JUNK}"))
    assert renders[0] == 0 and len(store.pages) == kept
    assert {r.status_code for r in busted} == {200}
    assert {r.headers["ETag"] for r in busted} == {first.headers["ETag"]}  # the canonical page, as kept
    assert all(JUNK not in r.get_data(as_text=True) for r in busted)


def test_sources_on_is_kept_apart_and_an_unknown_value_is_refused_without_keeping_anything():
    app = fresh_app()
    client, store = app.test_client(), app.extensions["caching"]
    plain, shown = client.get("/demo/"), client.get("/demo/?sources=on")
    assert plain.headers["ETag"] != shown.headers["ETag"]
    kept = len(store.pages)
    with counting_renders() as renders:
        assert client.get(f"/demo/?{JUNK}=1&sources=on").headers["ETag"] == shown.headers["ETag"]
    assert renders[0] == 0
    refused = client.get(f"/demo/?sources={JUNK}")
    assert refused.status_code == 400 and "show where each number comes from" in refused.get_data(as_text=True)
    assert len(store.pages) == kept


def test_warm_up_keeps_every_paper_with_its_sources_for_the_address_it_is_given():
    app = fresh_app()
    said = warm_up(app, "http://127.0.0.1:8123/")
    assert said == ["/ 200", "/demo/ 200", "/demo/?sources=on 200"]
    client = app.test_client()
    with counting_renders() as renders:
        for path in ("/", "/demo/", "/demo/?sources=on", f"/demo/?sources=on&x={JUNK}"):
            assert client.get(path, base_url="http://127.0.0.1:8123/").status_code == 200, path
    assert renders[0] == 0


def test_a_widget_page_is_kept_under_its_settings_alone_and_never_repeats_junk():
    app = fresh_app()
    client, store = app.test_client(), app.extensions["caching"]
    pages_kept = len(store.pages)
    first = client.get(f"/demo/widgets/coin-flips?flips=20&{JUNK}=<b>1</b>")
    with counting_renders() as renders:
        again = client.get(f"/demo/widgets/coin-flips?{JUNK}=2&flips=20")
    assert renders[0] == 0 and again.headers["ETag"] == first.headers["ETag"]
    assert JUNK not in first.get_data(as_text=True)  # the oEmbed link names the page without it
    assert "flips%3D20" in first.get_data(as_text=True)
    # Widget states (any value of any setting) are a store of their own: drawing many never evicts a page.
    for flips in range(21, 26):
        assert client.get(f"/demo/widgets/coin-flips?flips={flips}").status_code == 200
    assert len(store.states) == 6 and len(store.pages) == pages_kept


@pytest.mark.parametrize(("attacker", "neighbour", "reader"), [
    ("127.0.0.2", "127.0.0.2", "127.0.0.1"),
    ("2001:db8:1:2::1", "2001:db8:1:2::ffff", "2001:db8:1:3::1"),  # an IPv6 client is its /64
])
def test_a_client_past_its_render_budget_gets_429_while_kept_pages_answer(attacker, neighbour, reader):
    app = fresh_app(PAGE_RENDER_BUDGET_S=1e-9, PAGE_RENDER_WINDOW_S=60)  # one render spends it
    hostile, same_net, other = as_client(app, attacker), as_client(app, neighbour), as_client(app, reader)
    assert hostile.get("/demo/").status_code == 200  # a render: the budget is now spent
    with counting_renders() as renders:
        refused = [same_net.get("/demo/widgets/coin-flips?flips=30"), hostile.get("/api/widgets/demo/coin-flips?flips=31")]
        assert [r.status_code for r in refused] == [429, 429]
        assert all(int(r.headers["Retry-After"]) >= 1 for r in refused)  # (this budget drains slowly)
        assert "Try again in" in refused[0].get_data(as_text=True) and refused[1].json["status"] == 429
        assert hostile.get(f"/demo/?x={JUNK}").status_code == 200  # the kept page still answers it
        assert other.get("/demo/").status_code == 200  # and everyone else
    assert renders[0] == 0
    assert other.get("/demo/widgets/coin-flips?flips=30").status_code == 200  # another client's budget is its own


def test_the_render_budget_drains_and_remembers_a_bounded_number_of_clients():
    from engine.render_budget import RenderBudget

    budget = RenderBudget()
    with mock.patch("engine.render_budget.time.monotonic", return_value=100.0):
        budget.charge("a", 3.0, budget=2.0, window=60.0)
        assert budget.wait_s("a", 2.0, 60.0) == 30  # 1 CPU-s over, draining at 2/60 a second
    with mock.patch("engine.render_budget.time.monotonic", return_value=131.0):
        assert budget.wait_s("a", 2.0, 60.0) == 0
        for n in range(RenderBudget.MAX_CLIENTS + 10):
            budget.charge(f"c{n}", 1.0, budget=2.0, window=60.0)
    assert len(budget._spent) == RenderBudget.MAX_CLIENTS


def test_a_kept_page_is_split_at_its_markers_once_and_filled_each_time_it_is_served():
    import re

    from engine.caching import cached_page

    app = create_app({**FIXTURE_CONFIG, "TESTING": True})
    filled = []

    def fill(marker: dict) -> str:
        filled.append(marker["n"])
        return f"<b>{marker['n']}:{len(filled)}</b>"

    app.extensions["caching"].finishers.append((re.compile(r"<!--live-test:(?P<n>[0-9]+)-->"), fill))
    renders = []

    @app.get("/marked")
    @cached_page
    def marked():
        renders.append(1)
        return "<p>é</p><!--live-test:1--><p>b</p><!--live-test:2--><p>c</p>"

    client = app.test_client()
    first, second = client.get("/marked"), client.get("/marked")
    assert renders == [1] and filled == ["1", "2", "1", "2"]
    assert first.text == "<p>é</p><b>1:1</b><p>b</p><b>2:2</b><p>c</p>"
    assert second.text == "<p>é</p><b>1:3</b><p>b</p><b>2:4</b><p>c</p>"
    assert first.headers["ETag"] != second.headers["ETag"]  # the ETag follows what the fills wrote
    assert client.get("/marked", headers={"If-None-Match": second.headers["ETag"]}).status_code == 200
