"""Every widget's figure is laid out for the width it is drawn at (widgetkit.layout).

Measured in Python with the font's own widths, at widths from a small phone's to a wide screen's:
each text lies inside its figure and keeps clear of every other text (a label shown only on hover
or focus, class fig-point-label, only has to stay inside). tests/browser/legibility.test.mjs
measures the same in Chromium, at 320, 360, 768 and 1280 px.
"""
from __future__ import annotations

import pytest
from conftest import documents

from engine.widgets import view_of
from widgetkit.layout import DEFAULT_WIDTH, MAX_WIDTH, MIN_WIDTH, drawn_width, text_width, wrap
from widgetkit.scene import text_boxes

WIDTHS = (MIN_WIDTH, 273, 313, 360, 480, 630, 926, 1200)
# Settings that crowd a figure most: many groups, scores near the edges, the other sources (the
# live model's published runs among them).
CROWDED = {
    "calibration-bars": [{"bins": "10", "binning": "fixed_width"}, {"bins": "10"},
                         {"source": "0-shot", "bins": "10"}, {"source": "0-shot", "bins": "10", "binning": "fixed_width"}],
    "group-bars": [{"models": "live"}],  # the published runs (benchmarks/mmlu/runs/)
    "subject-bars": [{"model": "0-shot"}],
    "micro-macro": [{"source": "run-0-shot"}],  # a whole run: 57 subjects
    "chance-explorer": [{"options": "10", "score": "0.97", "n": "20"}, {"score": "0.02", "n": "20000"}],
    "release-gate": [{"delta": "0.05", "spread": "0.1"}, {"delta": "-0.05", "corr": "0"}],
    "scaling-plot": [{"show": "unifiedqa"}, {"show": ""}],
    "guessing-floor": [{"known": "1"}, {"known": "0", "category": "law"}],
    "mmlu-vs-pro": [{"show": ""}],
    "prompt-spread": [{"scale": "full"}],
    "error-causes": [{"order": "name"}],
    "cot-vs-direct": [{"benchmark": "mmlu"}],
    "category-bars": [{"score": "1"}, {"score": "0", "band": "normal"}],
    "two-run-gate": [{"multiple": "4"}],
    "prompt-anatomy": [{"shots": "5", "subject": "high_school_european_history"}],
}


def problems(fig: dict) -> list[str]:
    found = []
    boxes = text_boxes(fig)
    for i, (box, text, cls) in enumerate(boxes):
        if not box.inside(fig["width"], fig["height"]):
            found.append(f"{text!r} leaves the figure: {box}")
        if "fig-point-label" in cls:
            continue
        for other, other_text, other_cls in boxes[:i]:
            if "fig-point-label" not in other_cls and box.meets(other, -1):
                found.append(f"{text!r} meets {other_text!r}")
    return found


def every_view(app, slug: str):
    with app.app_context():
        paper = app.extensions["documents"][slug]
        for widget in paper.widgets.values():
            if widget.driver == "live":
                continue
            for state in [{}, *CROWDED.get(widget.name, [])]:
                for width in WIDTHS:
                    yield f"{paper.slug}/{widget.name} {state} at {width}", view_of(
                        paper, widget, {**state, "width": str(width)})


# One test per document (the real ones found in content/, and the fixture's demo), so xdist can
# share them out; each names the widget it must at least have drawn.
DRAWN = {"mmlu": "scaling-plot", "mmlu-pro": "category-bars", "scoring-lesson": "two-run-gate", "demo": "coin-flips"}


@pytest.mark.slow  # every widget at eight widths, the gate over whole runs
@pytest.mark.parametrize("slug", [*documents(), "demo"])
def test_every_figure_fits_its_width_with_no_text_clipped_or_overlapping(slug, real_app, fixture_app):
    seen, found = set(), []
    for name, view in every_view(fixture_app if slug == "demo" else real_app, slug):
        seen.add(name.split(" ")[0])
        assert view["width"] == int(name.rsplit(" ", 1)[1])
        assert view["figure"]["width"] <= view["width"], f"{name}: drawn wider than asked"
        found += [f"{name}: {problem}" for problem in problems(view["figure"])]
    assert seen and (slug not in DRAWN or f"{slug}/{DRAWN[slug]}" in seen), seen
    assert not found, "\n".join(found)


def test_the_width_is_not_a_setting(fixture_app):
    app = fixture_app
    with app.app_context():
        paper = app.extensions["documents"]["demo"]
        view = view_of(paper, paper.widgets["coin-flips"], {"flips": "40", "width": "300"})
    assert view["width"] == 300 and view["figure"]["width"] == 300
    assert "width" not in view["state"] and view["query"] == "flips=40"


@pytest.mark.parametrize(("sent", "width", "said"), [
    (None, DEFAULT_WIDTH, False), ("", DEFAULT_WIDTH, False), ("313", 313, False), (480, 480, False),
    ("10", MIN_WIDTH, False), ("99999", MAX_WIDTH, False), ("wide", DEFAULT_WIDTH, True), ("3.5", DEFAULT_WIDTH, True),
])
def test_a_width_from_the_page_is_checked(sent, width, said):
    assert drawn_width(sent) == (width, [f"width: {str(sent)!r} is not a whole number of pixels; drawn at 640."] if said else [])


def test_text_is_measured_with_the_fonts_widths():
    assert text_width("100%") == pytest.approx(12 * (3 * 0.637 + 0.951), abs=0.05)
    assert text_width("W", "fig-point-label") > text_width("W", "fig-label")  # bold is wider
    assert wrap("one two three four", text_width("one two three")) == ["one two three", "four"]
