"""The widgets on the server: every page renders, settings are checked, embedding and oEmbed work.

The browser side (redraws, keyboard use, embedding from another origin) is in
tests/browser/widgets.test.mjs and tests/browser/embed.test.mjs.
"""
from __future__ import annotations

import html
import re
from urllib.parse import quote, urlsplit

import pytest

import explainers
from explainers.widget_models import WIDGETS, widget_view
from mmlu_explainer import prompt, widgets

DRAWN = sorted(WIDGETS)


def summary_of(page: str) -> list[str]:
    """The sentences of a rendered widget's text summary, unescaped."""
    block = re.search(r'<figcaption class="widget-summary"[^>]*>(.*?)</figcaption>', page, re.S).group(1)
    return [html.unescape(p) for p in re.findall(r"<p>(.*?)</p>", block, re.S)]


def messages_of(page: str) -> list[str]:
    block = re.search(r'<div class="widget-messages"[^>]*>(.*?)</div>', page, re.S).group(1)
    return [html.unescape(m) for m in re.findall(r"<li>(.*?)</li>", block, re.S)]


@pytest.mark.parametrize("name", DRAWN)
def test_every_widget_renders_without_javascript(client, name):
    for url in (f"/mmlu/widgets/{name}", f"/embed/{name}"):
        response = client.get(url)
        assert response.status_code == 200, url
        page = response.get_data(as_text=True)
        assert '<svg class="widget-figure"' in page
        assert summary_of(page), "the text summary is empty"
        assert '<form class="widget-controls" method="get"' in page  # works without JavaScript
        assert "style=" not in page.replace('style=\\"', "").split("<textarea")[0]  # CSP: no inline styles


def test_only_embed_pages_may_be_framed(client):
    embed = client.get("/embed/chance-explorer")
    assert "frame-ancestors *" in embed.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in embed.headers
    page = client.get("/mmlu/widgets/chance-explorer")
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"


def test_state_in_the_url_is_what_the_page_shows(client):
    small = summary_of(client.get("/mmlu/widgets/chance-explorer?n=100&score=0.30").get_data(as_text=True))
    large = summary_of(client.get("/mmlu/widgets/chance-explorer?n=1000&score=0.30").get_data(as_text=True))
    assert explainers.is_distinguishable_from_chance(0.3, 100) is False
    assert explainers.is_distinguishable_from_chance(0.3, 1000) is True
    assert "cannot be told apart" in small[1]
    assert "can be told apart" in large[1] and "cannot" not in large[1]
    low, high = explainers.confidence_interval(0.3, 1000)
    assert f"{100 * low:.1f}% to {100 * high:.1f}%" in large[0]


def test_a_subject_sets_the_number_of_questions(client, app):
    size = app.extensions["mmlu_data"].subject("college_medicine").sizes["test"]
    page = client.get("/mmlu/widgets/chance-explorer?subject=college_medicine&n=5").get_data(as_text=True)
    assert f"({size} test questions)" in summary_of(page)[0]
    assert f'name="n" min="1" max="20000" step="1" value="{size}"' in page


def test_out_of_range_and_malformed_values_are_clamped_with_a_message(client):
    page = client.get("/mmlu/widgets/chance-explorer?n=999999&score=abc&options=7&level=0.5").get_data(as_text=True)
    messages = messages_of(page)
    assert any("between 1 and 20000" in m and "20000" in m for m in messages)
    assert any("“abc” is not a number" in m for m in messages)
    assert any("Answer options" in m for m in messages)
    assert any("Confidence level" in m for m in messages)
    assert "20,000 questions" in summary_of(page)[0]


def test_reader_text_is_never_rendered_as_markup(client):
    attack = quote('<script>alert(1)</script>"><img src=x onerror=alert(1)>')
    for url in (f"/mmlu/widgets/chance-explorer?n={attack}", f"/embed/calibration-bars?conf={attack}",
                f"/embed/scaling-plot?show={attack}", f"/embed/prompt-anatomy?subject={attack}"):
        response = client.get(url)
        assert response.status_code == 200
        page = response.get_data(as_text=True)
        assert "<script>alert" not in page and "<img src=x" not in page
        assert messages_of(page), f"{url} shows no message about the bad value"


def test_unknown_widget_is_a_friendly_404(client, app):
    response = client.get("/embed/no-such-widget")
    assert response.status_code == 404
    assert "no widget called" in response.get_data(as_text=True)
    with app.test_request_context():
        slot = widgets.render_inline("<b>nope</b>")
    assert "no widget called" in slot and "<b>" not in slot


def test_live_scoring_slot_renders(client):
    response = client.get("/embed/live-scoring")
    assert response.status_code == 200


def test_calibration_numbers_come_from_the_math_core(client):
    conf = [0.9, 0.9, 0.95, 0.85, 0.9, 0.4, 0.35, 0.45, 0.4, 0.4]
    right = [1, 1, 1, 0, 0, 1, 0, 1, 0, 0]
    query = f"conf={','.join(map(str, conf))}&correct={','.join(map(str, right))}&bins=2"
    sentences = summary_of(client.get(f"/embed/calibration-bars?{query}").get_data(as_text=True))
    rms = explainers.rms_calibration_error(conf, right, 2)
    assert f"{rms:.3f}" in sentences[1]
    assert f"gap {explainers.calibration_gap(conf, right):.2f}" in sentences[0]
    # repeated form fields (the no-JavaScript form) mean the same as comma lists
    repeated = "&".join([f"conf={c}" for c in conf] + [f"correct={r}" for r in right]) + "&bins=2"
    assert summary_of(client.get(f"/embed/calibration-bars?{repeated}").get_data(as_text=True)) == sentences


def test_mismatched_calibration_lists_use_the_common_part(client):
    page = client.get("/embed/calibration-bars?conf=0.9,0.8,0.7&correct=1,0").get_data(as_text=True)
    assert any("first 2 pairs" in m for m in messages_of(page))
    assert summary_of(page)[0].startswith("2 answers")


def test_group_bars_show_micro_and_macro_averages(client, app):
    row = explainers.paper_figures()["table_1"]["rows"][0]
    with app.test_request_context():
        context = widgets.widget_context()
    groups = ("humanities", "social_sciences", "stem", "other")
    micro = explainers.weighted_accuracy([context["group_sizes"][g] for g in groups], [row[g] / 100 for g in groups])
    macro = explainers.plain_mean([row[g] / 100 for g in groups])
    text = " ".join(summary_of(client.get("/embed/group-bars").get_data(as_text=True)))
    assert "Micro average" in text and f"{100 * micro:.1f}%" in text and f"{100 * macro:.1f}%" in text


def test_release_gate_is_reproducible_and_loads_results(app):
    with app.test_request_context():
        context = widgets.widget_context()
    first = widget_view("release-gate", {"delta": "-0.02", "draw": "3"}, context)
    again = widget_view("release-gate", {"delta": "-0.02", "draw": "3"}, context)
    other = widget_view("release-gate", {"delta": "-0.02", "draw": "4"}, context)
    assert first == again and first["numbers"] != other["numbers"]
    assert first["numbers"]["subjects"] == len(context["subject_sizes"])
    loaded = dict(context, results={"subjects": ["a", "a", "b", "b"], "baseline": [1, 0, 1, 1], "candidate": [1, 1, 0, 1]})
    view = widget_view("release-gate", {}, loaded)
    gate = explainers.gate_verdict([1, 1, 0, 1], [1, 0, 1, 1], ["a", "a", "b", "b"])
    assert view["numbers"]["delta"] == gate["delta"] and "loaded results (4 questions)" in view["summary"][0]


def test_prompt_anatomy_shows_the_exact_prompt(client, app):
    data = app.extensions["mmlu_data"]
    view = client.get("/api/widgets/prompt-anatomy?subject=anatomy&shots=3&q=2").get_json()
    question = data.question("anatomy", "test", 1)
    expected = prompt.build_prompt("anatomy", question.question, question.choices, data.questions("anatomy", "dev")[:3])
    assert "".join(p["text"] for p in view["prompt"]["parts"]) == expected
    assert [p["kind"] for p in view["prompt"]["parts"]].count("shot") == 3
    assert view["prompt"]["key"] == question.answer
    too_far = client.get("/api/widgets/prompt-anatomy?subject=anatomy&q=100000").get_json()
    assert too_far["state"]["q"] == too_far["prompt"]["questions"] and too_far["messages"]
    assert too_far["query"] == f"subject=anatomy&q={too_far['prompt']['questions']}"


def test_browser_and_server_run_the_same_view_function(client):
    """The worker calls widget_view through the math core's registry; the API exposes the same call."""
    context = client.get("/api/widgets/chance-explorer").get_json()
    state = {"n": "400", "score": "0.33"}
    api = client.post("/api/explainers/widget_view", json={"widget": "chance-explorer", "state": state})
    assert api.status_code == 200
    direct = client.get("/api/widgets/chance-explorer?n=400&score=0.33").get_json()
    assert api.get_json()["result"]["summary"] == direct["summary"] and context["figure"] != direct["figure"]


def test_widget_view_rejects_bad_context_in_words(client):
    response = client.post("/api/explainers/widget_view",
                           json={"widget": "release-gate", "context": {"subject_sizes": {"a": -1}}})
    assert response.status_code == 400 and "subject_sizes" in response.get_json()["error"]
    response = client.post("/api/explainers/widget_view", json={"widget": "nope"})
    assert response.status_code == 400 and "unknown widget" in response.get_json()["error"]


def test_oembed_returns_an_iframe_for_widget_urls(client):
    url = "http://localhost/mmlu/widgets/chance-explorer?n=1000&score=0.3&junk=1"
    body = client.get(f"/oembed?url={quote(url)}&format=json&maxwidth=500").get_json()
    assert body["type"] == "rich" and body["version"] == "1.0" and body["width"] == 500
    assert 'src="http://localhost/embed/chance-explorer?n=1000"' in body["html"]  # score=0.3 is the default
    embed_url = "http://localhost/embed/scaling-plot?show=fewshot"
    assert "show=fewshot" in client.get(f"/oembed?url={quote(embed_url)}").get_json()["html"]


@pytest.mark.parametrize("query, status", [
    ("", 400),
    ("url=http://localhost/mmlu/widgets/chance-explorer&format=xml", 400),
    ("url=http://elsewhere.example/mmlu/widgets/chance-explorer", 404),
    ("url=http://localhost/mmlu/widgets/nope", 404),
    ("url=javascript:alert(1)", 404),
    ("url=http://localhost/mmlu/widgets/chance-explorer&maxheight=-4", 400),
])
def test_oembed_refuses_bad_requests_in_words(client, query, status):
    response = client.get(f"/oembed?{query}")
    assert response.status_code == status
    assert response.get_json()["error"]


def test_widget_pages_advertise_oembed(client):
    page = client.get("/mmlu/widgets/group-bars?level=0.99").get_data(as_text=True)
    link = re.search(r'<link rel="alternate" type="application/json\+oembed" href="([^"]+)"', page)
    assert link
    target = urlsplit(html.unescape(link.group(1)))
    body = client.get(f"{target.path}?{target.query}").get_json()
    assert "/embed/group-bars?level=0.99" in body["html"]


def test_share_links_reproduce_the_state(client):
    page = client.get("/mmlu/widgets/chance-explorer?n=250&score=0.4").get_data(as_text=True)
    assert 'value="http://localhost/mmlu/widgets/chance-explorer?n=250&amp;score=0.4"' in page
    assert "http://localhost/embed/chance-explorer?n=250&amp;amp;score=0.4" in page  # escaped inside the snippet


def test_gallery_lists_every_widget(client):
    page = client.get("/mmlu/widgets/").get_data(as_text=True)
    for name in widgets.REGISTRY:
        assert f"/mmlu/widgets/{name}" in page
