"""The MMLU-Pro widgets on the server: pages, embeds, widget JSON, oEmbed, gallery, and their numbers
against direct explainers calls and the paper's figures (the browser side: tests/browser/mmlu-pro.test.mjs)."""
from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from documents.mmlu_pro import figures
from documents.mmlu_pro.widgets import category_bars, guessing_floor

from content_helpers import summary_of
from explainers import chance_band, confidence_interval, expected_score, weighted_accuracy
from widgetkit import run_view


def test_guessing_floor_uses_the_real_category_sizes_and_the_math_core(client, app):
    widget_context = app.extensions["documents"]["mmlu-pro"].hooks.widget_context

    context = widget_context(app)
    assert context["category_sizes"]["history"] == 381 and context["sizes_from"] == "the test file"
    view = run_view(guessing_floor.WIDGET, {"category": "history", "known": "0.5"}, context)
    for options in (4, 10):
        low, high = chance_band(381, options, 0.95, "exact")
        assert view["numbers"][f"k{options}"] == {"low": low, "high": high, "expected": expected_score(0.5, options)}
    page = client.get("/mmlu-pro/widgets/guessing-floor?category=history&known=0.5").get_data(as_text=True)
    assert any("history (381 questions)" in sentence for sentence in summary_of(page))


def test_guessing_floor_clamps_and_refuses_unknown_categories_with_a_message(client):
    page = client.get("/mmlu-pro/widgets/guessing-floor?known=7&category=<b>x</b>").get_data(as_text=True)
    assert re.search(r'<div class="widget-messages"', page)
    assert "<b>x</b>" not in page


def test_the_paper_figures_are_what_the_widgets_say(client):
    page = client.get("/mmlu-pro/widgets/mmlu-vs-pro").get_data(as_text=True)
    assert "The drops shown run from 16.1 to 32.3 points" in " ".join(summary_of(page))
    cot = client.get("/api/widgets/mmlu-pro/cot-vs-direct?benchmark=mmlu").get_json()
    assert cot["numbers"]["gains"]["Llama-3-8B"] == -3.9
    assert sum(share for _, share in figures.ERROR_CAUSES) == 100


def test_oembed_for_an_mmlu_pro_widget(client):
    url = "http://localhost/mmlu-pro/widgets/guessing-floor?category=law"
    body = client.get(f"/oembed?url={quote(url)}&format=json").get_json()
    assert body["type"] == "rich" and 'src="http://localhost/embed/mmlu-pro/guessing-floor?category=law"' in body["html"]


def test_category_bars_are_gpt4os_category_scores_with_the_math_cores_bands_on_the_real_sizes(app):
    """Each category's mark is its own score (the dataset card's), its band around it; the overall
    score is the line the bands are compared with, not the centre of every band."""
    widget_context = app.extensions["documents"]["mmlu-pro"].hooks.widget_context

    view = run_view(category_bars.WIDGET, {"score": "0.5", "band": "normal"}, widget_context(app))
    for category, size in (("history", 381), ("math", 1351), ("law", 1101)):
        score = figures.GPT4O_CATEGORIES[category] / 100
        assert view["numbers"]["scores"][category] == score
        assert view["numbers"]["bands"][category] == confidence_interval(score, size, 0.95, "normal")
    text = "\n".join(view["summary"])
    assert "law (1,101 questions): GPT-4o scored 51.0% (dataset card), 95% band 48.1% to 54.0%, " \
           "so the overall 50.0% is within it." in text
    assert "math (1,351 questions): GPT-4o scored 76.1% (dataset card), 95% band 73.8% to 78.4%, " \
           "so above the overall 50.0%." in text
    rows = [g for g in view["figure"]["marks"] if g["attrs"].get("class") == "fig-point"]  # not the key's sample
    dots = [m for g in rows for m in g["children"] if m["attrs"].get("class") == "fig-dot"]
    assert len({m["attrs"]["cx"] for m in dots}) >= 12  # at their own scores, not one column
    at_the_overall = run_view(category_bars.WIDGET, {"score": "0.726"}, widget_context(app))["summary"][1]
    assert at_the_overall.startswith("Against an overall 72.6%, the bands of law and engineering below it;")


def test_category_bars_draw_the_live_models_published_run_with_its_own_bands(app):
    widget_context = app.extensions["documents"]["mmlu-pro"].hooks.widget_context

    context = widget_context(app)
    run = context["live_run"]
    view = run_view(category_bars.WIDGET, {"results": "run", "band": "wilson"}, context)
    right, n, chance = run["categories"]["history"]
    assert n == 100 and view["numbers"]["bands"]["history"] == confidence_interval(right / n, n, 0.95, "wilson")
    sizes = context["category_sizes"]
    names = list(run["categories"])
    assert view["numbers"]["whole_test"] == weighted_accuracy([sizes[c] for c in names],
                                                              [view["numbers"]["accuracy"][c] for c in names])
    text = " ".join(view["summary"])
    assert "not the paper's 5-shot chain of thought" in text and "first 100 test questions of each category" in text
    assert f"history (100 of its 381 questions scored): {right} right" in text
    assert ("run", f"our model, {run['shots']}-shot sample") in category_bars.params(context)[0].choices
    assert run["model"] in text  # the summary names the model in full


@pytest.mark.parametrize("bad, says", [
    ({"model": "m", "sample": "s", "shots": 0, "categories": {"law": [5, 4, 0.1]}}, "more right answers"),
    ({"model": "m", "sample": "s", "shots": 0, "categories": {"law": [1, 4]}}, "[right, questions, chance rate]"),
    ({"model": "m", "sample": "s", "shots": 0, "categories": {"law": [1, 4, 2]}}, "chance rate"),
    ({"sample": "s", "shots": 0, "categories": {"law": [1, 4, 0.1]}}, "live_run.model"),
])
def test_category_bars_refuse_a_malformed_run_naming_what_is_wrong(bad, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        category_bars.run_summary("live_run", bad)


def test_the_wheel_carries_the_widgets_but_not_the_server(app):
    import io
    import zipfile

    from engine.wheel import build_wheel

    names = zipfile.ZipFile(io.BytesIO(build_wheel(app.extensions["documents"]).data)).namelist()
    assert "documents/mmlu_pro/widgets/guessing_floor.py" in names and "documents/mmlu_pro/figures.py" in names
    assert "documents/mmlu_pro/hooks.py" not in names
    assert not [name for name in names if name.startswith("benchmarks/mmlu_pro/server/")]
