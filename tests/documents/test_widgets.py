"""The MMLU widgets on the server: settings are checked, embedding and oEmbed work (every document's
widget pages, embeds and galleries: test_every_widget.py).

The browser side (redraws, keyboard use, embedding from another origin) is in
tests/browser/widgets.test.mjs and tests/browser/embed.test.mjs.
"""
from __future__ import annotations

import html
import re
from urllib.parse import quote, urlsplit

import pytest
from conftest import widgets_found

import explainers
from benchmarks.mmlu import prompt
from benchmarks.mmlu.figures import paper_figures
from content_helpers import messages_of, summary_of
from widgetkit import run_view
from widgetkit.browser import find_widget

MMLU_WIDGETS = [name for slug, name, _ in widgets_found() if slug == "mmlu"]


def paper_context(app) -> dict:
    widget_context = app.extensions["documents"]["mmlu"].hooks.widget_context

    return widget_context(app)


def test_only_embed_pages_may_be_framed(client):
    embed = client.get("/embed/mmlu/chance-explorer")
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
    for url in (f"/mmlu/widgets/chance-explorer?n={attack}", f"/embed/mmlu/calibration-bars?conf={attack}",
                f"/embed/mmlu/scaling-plot?show={attack}", f"/embed/mmlu/prompt-anatomy?subject={attack}"):
        response = client.get(url)
        assert response.status_code == 200
        page = response.get_data(as_text=True)
        assert "<script>alert" not in page and "<img src=x" not in page
        assert messages_of(page), f"{url} shows no message about the bad value"


def test_unknown_widget_is_a_friendly_404(client):
    for url in ("/embed/no-such-widget", "/embed/mmlu/no-such-widget", "/mmlu/widgets/%3Cb%3Enope"):
        response = client.get(url)
        assert response.status_code == 404, url
        page = response.get_data(as_text=True)
        assert "no widget called" in page and "<b>nope" not in page


def test_older_embed_addresses_still_work(client):
    """Teachers pasted /embed/<name> before papers had their own addresses."""
    response = client.get("/embed/chance-explorer?n=250&score=0.4")
    assert response.status_code == 301
    assert response.headers["Location"].endswith("/embed/mmlu/chance-explorer?n=250&score=0.4")
    assert client.get("/embed/chance-explorer", follow_redirects=True).status_code == 200


def test_live_scoring_slot_renders(client):
    response = client.get("/embed/mmlu/live-scoring")
    assert response.status_code == 200 and "data-ls-widget" in response.get_data(as_text=True)


def test_only_a_live_widget_with_a_form_hook_takes_a_post(client):
    """A drawn widget's state is its address; a live widget takes a POST only where its paper
    answers forms (live_widget_form; the scoring lesson's three-scorers widget is tested in
    test_scoring_lesson_scorers.py)."""
    for url in ("/mmlu/widgets/chance-explorer", "/embed/mmlu/chance-explorer", "/embed/mmlu/live-scoring"):
        response = client.post(url, data={"n": "5"})
        assert response.status_code == 405, url
    assert client.post("/nope/widgets/chance-explorer").status_code == 404
    assert client.post("/embed/mmlu/nope").status_code == 404


def test_calibration_numbers_come_from_the_math_core(client):
    conf = [0.9, 0.9, 0.95, 0.85, 0.9, 0.4, 0.35, 0.45, 0.4, 0.4]
    right = [1, 1, 1, 0, 0, 1, 0, 1, 0, 0]
    query = f"conf={','.join(map(str, conf))}&correct={','.join(map(str, right))}&bins=2"
    sentences = summary_of(client.get(f"/embed/mmlu/calibration-bars?{query}").get_data(as_text=True))
    rms = explainers.rms_calibration_error(conf, right, 2)
    assert f"{rms:.3f}" in sentences[1]
    assert f"gap {explainers.calibration_gap(conf, right):.2f}" in sentences[0]
    # repeated form fields (the no-JavaScript form) mean the same as comma lists
    repeated = "&".join([f"conf={c}" for c in conf] + [f"correct={r}" for r in right]) + "&bins=2"
    assert summary_of(client.get(f"/embed/mmlu/calibration-bars?{repeated}").get_data(as_text=True)) == sentences


def test_mismatched_calibration_lists_use_the_common_part(client):
    page = client.get("/embed/mmlu/calibration-bars?conf=0.9,0.8,0.7&correct=1,0").get_data(as_text=True)
    assert any("first 2 pairs" in m for m in messages_of(page))
    assert summary_of(page)[0].startswith("2 answers")


def test_group_bars_show_micro_and_macro_averages(client, app):
    row = paper_figures()["table_1"]["rows"][0]
    context = paper_context(app)
    groups = ("humanities", "social_sciences", "stem", "other")
    micro = explainers.weighted_accuracy([context["group_sizes"][g] for g in groups], [row[g] / 100 for g in groups])
    macro = explainers.plain_mean([row[g] / 100 for g in groups])
    text = " ".join(summary_of(client.get("/embed/mmlu/group-bars").get_data(as_text=True)))
    assert "Micro average" in text and f"{100 * micro:.1f}%" in text and f"{100 * macro:.1f}%" in text


def test_release_gate_is_reproducible_and_loads_results(app):
    gate = find_widget("mmlu", "release-gate")
    context = {"subject_sizes": paper_context(app)["subject_sizes"]}
    first = run_view(gate, {"delta": "-0.02", "draw": "3"}, context)
    again = run_view(gate, {"delta": "-0.02", "draw": "3"}, context)
    other = run_view(gate, {"delta": "-0.02", "draw": "4"}, context)
    assert first == again and first["numbers"] != other["numbers"]
    assert first["numbers"]["subjects"] == len(context["subject_sizes"])
    loaded = dict(context, results={"subjects": ["a", "a", "b", "b"], "baseline": [1, 0, 1, 1], "candidate": [1, 1, 0, 1]})
    view = run_view(gate, {}, loaded)
    verdict = explainers.gate_verdict([1, 1, 0, 1], [1, 0, 1, 1], ["a", "a", "b", "b"])
    assert view["numbers"]["delta"] == verdict["delta"] and "loaded results (4 questions)" in view["summary"][1]
    # two subjects: the summary says the clustered error is unreliable and what the gate uses instead
    assert view["numbers"]["few_subjects"] and view["numbers"]["band"] == verdict["band"]
    assert any(line.startswith("Only 2 subjects") for line in view["summary"])
    assert any(line.startswith("With fewer than") and "Student's t" in line for line in view["for_engineers"])
    assert not first["numbers"]["few_subjects"] and not any("unreliable" in line for line in first["summary"])


def test_prompt_anatomy_shows_the_exact_prompt(client, app):
    data = app.extensions["mmlu_data"]
    view = client.get("/api/widgets/mmlu/prompt-anatomy?subject=anatomy&shots=3&q=2").get_json()
    question = data.question("anatomy", "test", 1)
    expected = prompt.build_prompt("anatomy", question.question, question.choices, data.questions("anatomy", "dev")[:3])
    assert "".join(p["text"] for p in view["prompt"]["parts"]) == expected
    assert [p["kind"] for p in view["prompt"]["parts"]].count("shot") == 3
    assert view["prompt"]["key"] == question.answer
    assert html.unescape(re.sub(r"<[^>]+>", "", view["fragments"]["prompt-text"])) == expected  # the page's own markup
    too_far = client.get("/api/widgets/mmlu/prompt-anatomy?subject=anatomy&q=100000").get_json()
    assert too_far["state"]["q"] == too_far["prompt"]["questions"] and too_far["messages"]
    assert too_far["query"] == f"subject=anatomy&q={too_far['prompt']['questions']}"


def test_browser_and_server_run_the_same_view_function(client):
    """The worker's entry point (widgetkit.browser.run_batch) makes the view the widget route serves."""
    import json

    from widgetkit.browser import run_batch

    page = client.get("/mmlu/widgets/chance-explorer").get_data(as_text=True)
    context = json.loads(html.unescape(re.search(r"data-context='([^']+)'", page).group(1)))
    state = {"n": "400", "score": "0.33"}
    [worker] = json.loads(run_batch(json.dumps([{"view": "mmlu/chance-explorer", "state": state, "context": context}])))
    direct = client.get("/api/widgets/mmlu/chance-explorer?n=400&score=0.33").get_json()
    assert worker["result"] == direct
    assert client.post("/api/explainers/widget_view", json={}).status_code == 404  # views are not math


def test_widget_json_names_what_is_unknown(client):
    assert client.get("/api/widgets/mmlu/nope").status_code == 404
    assert client.get("/api/widgets/nope/chance-explorer").status_code == 404
    assert client.get("/api/widgets/mmlu/live-scoring").status_code == 404  # the model's state is not a view


def test_oembed_returns_an_iframe_for_widget_urls(client):
    url = "http://localhost/mmlu/widgets/chance-explorer?n=1000&score=0.3&junk=1"
    body = client.get(f"/oembed?url={quote(url)}&format=json&maxwidth=500").get_json()
    assert body["type"] == "rich" and body["version"] == "1.0" and body["width"] == 500
    assert 'src="http://localhost/embed/mmlu/chance-explorer?n=1000"' in body["html"]  # score=0.3 is the default
    for embed_url in ("http://localhost/embed/mmlu/scaling-plot?show=fewshot", "http://localhost/embed/scaling-plot?show=fewshot"):
        assert "show=fewshot" in client.get(f"/oembed?url={quote(embed_url)}").get_json()["html"]


def test_oembed_html_resizes_and_honours_maxwidth_and_maxheight(client):
    url = quote("http://localhost/mmlu/widgets/calibration-bars")
    body = client.get(f"/oembed?url={url}&maxwidth=600").get_json()
    iframe, script = body["html"].split("\n")
    assert body["width"] == 600 and 'width="600"' in iframe and f'height="{body["height"]}"' in iframe
    assert "data-max-height" not in iframe  # the frame grows to the whole widget
    assert script == '<script src="http://localhost/static/js/embed-resize.js" async></script>'
    capped = client.get(f"/oembed?url={url}&maxwidth=9999&maxheight=400").get_json()
    assert capped["width"] == 640 and capped["height"] == 400
    assert 'height="400" data-max-height="400"' in capped["html"]  # embed-resize.js stops there; the frame scrolls


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
    assert "/embed/mmlu/group-bars?level=0.99" in body["html"]


def test_share_links_reproduce_the_state(client):
    page = client.get("/mmlu/widgets/chance-explorer?n=250&score=0.4").get_data(as_text=True)
    assert 'value="http://localhost/mmlu/widgets/chance-explorer?n=250&amp;score=0.4"' in page
    assert "http://localhost/embed/mmlu/chance-explorer?n=250&amp;amp;score=0.4" in page  # escaped inside the snippet


def test_a_percent_box_takes_percent_without_javascript(client):
    """The form sent without JavaScript: the score's box holds and posts percent (score_percent),
    and the page it gives is the one ?score= gives, with the share in its link."""
    shared = client.get("/mmlu/widgets/chance-explorer?n=250&score=0.4").get_data(as_text=True)
    typed = client.get("/mmlu/widgets/chance-explorer?n=250&score_percent=40").get_data(as_text=True)
    assert summary_of(typed) == summary_of(shared)
    assert 'value="http://localhost/mmlu/widgets/chance-explorer?n=250&amp;score=0.4"' in typed
    box = re.search(r'<input type="number" id="w-chance-explorer-score" [^>]*>', typed)[0]
    assert 'name="score_percent"' in box and 'value="40"' in box and 'min="0" max="100"' in box
    assert '<span class="control-unit" id="w-chance-explorer-score-unit">%</span>' in typed
    # The box's name is part of the page's state: another percent is another page, not a cached one.
    assert summary_of(client.get("/mmlu/widgets/chance-explorer?n=250&score_percent=60").get_data(as_text=True)) \
        != summary_of(typed)
    assert messages_of(client.get("/mmlu/widgets/chance-explorer?score_percent=140").get_data(as_text=True)) \
        == ["Measured score must be between 0% and 100%; 140% was changed to 100%."]


def test_a_new_paper_is_one_folder_with_its_own_widget():
    """tests/fixtures/content/demo is a document folder with a widget module, template and list entry:
    it gets its page, gallery, widget page, embed, widget JSON, oEmbed and a place in the browser's
    wheel, and no engine file names it."""
    import io
    import zipfile

    from content_helpers import fixture_app

    app = fixture_app()
    client = app.test_client()
    assert 'data-widget="coin-flips"' in client.get("/demo/").get_data(as_text=True)
    gallery = client.get("/demo/widgets/").get_data(as_text=True)
    assert "/demo/widgets/coin-flips" in gallery and "Demo, annotated" in gallery
    page = client.get("/demo/widgets/coin-flips?flips=40&heads=0.25").get_data(as_text=True)
    se = explainers.standard_error(0.25, 40)
    assert summary_of(page) == [f"25.0% heads in 40 flips: standard error {100 * se:.1f} points."]
    embed = client.get("/embed/demo/coin-flips?flips=40")
    assert embed.status_code == 200 and "frame-ancestors *" in embed.headers["Content-Security-Policy"]
    assert client.get("/embed/coin-flips").headers["Location"].endswith("/embed/demo/coin-flips")
    assert client.get("/api/widgets/demo/coin-flips?flips=4").get_json()["state"]["flips"] == 4
    url = quote("http://localhost/demo/widgets/coin-flips?flips=40&heads=0.5")
    assert 'src="http://localhost/embed/demo/coin-flips?flips=40"' in client.get(f"/oembed?url={url}").get_json()["html"]
    wheel_url = client.get("/api/explainers").get_json()["runtime"]["wheel"]
    with zipfile.ZipFile(io.BytesIO(client.get(wheel_url).data)) as wheel:
        assert "documents/demo/widgets/coin_flips.py" in wheel.namelist()


def test_no_engine_file_names_a_paper_or_a_widget():
    """The engine, the site-wide templates and scripts, the widget kit and the model service are
    paper-agnostic: what is MMLU's lives in content/mmlu/ and benchmarks/mmlu/."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    names = re.compile("|".join(["mmlu", "hendrycks", *MMLU_WIDGETS, *(w.replace("-", "_") for w in MMLU_WIDGETS)]), re.I)
    found = []
    for folder in ("engine", "widgetkit", "livescoring", "templates", "static/js", "static/css"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".html", ".js", ".css"):
                found += [f"{path.relative_to(root)}:{n}: {line.strip()}" for n, line in
                          enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if names.search(line)]
    assert not found, "\n".join(found)
