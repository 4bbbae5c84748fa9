"""Handles in the server's SVG: the marks a reader drags or keys (widgetkit.scene.handle) are
sliders already in the page the server sends, each bound to a control of the widget's form,
which stays for readers without JavaScript. tests/browser/handles.test.mjs drags and keys them.

For each, the value its stops give at the middle of its grip (where it is drawn) must be the
value it announces: the mapping the page's script drags along is the picture's own.
"""
from __future__ import annotations

from html.parser import HTMLParser

import pytest

from widgetkit.browser import find_widget

# (address, the handles its first view holds, by data-mark)
HANDLES = [
    ("/mmlu/widgets/chance-explorer?n=100&score=0.3", {"score", "n"}),
    ("/mmlu/widgets/chance-explorer?n=1534&score=0.8&band=wilson", {"score", "n"}),
    ("/mmlu/widgets/calibration-bars", {"group-1", "group-2"}),
    ("/mmlu/widgets/release-gate?multiple=3", {"multiple"}),
    ("/scoring-lesson/widgets/two-run-gate?source=noise", {"multiple"}),
    ("/mmlu-pro/widgets/guessing-floor?known=0.4", {"known-4", "known-10"}),
    ("/mmlu-pro/widgets/category-bars?score=0.5", {"score"}),
]


class Figure(HTMLParser):
    """The first figure's handles (attributes, and their grip's), and the form's control names."""

    def __init__(self):
        super().__init__()
        self.svg_role, self.in_figure, self.done = None, False, False
        self.handles: list[dict] = []
        self.controls: set[str] = set()
        self.form_method = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and "widget-controls" in (attrs.get("class") or ""):
            self.form_method = attrs.get("method")
        if tag in ("input", "select") and attrs.get("name"):
            self.controls.add(attrs["name"])
        if tag == "input" and attrs.get("data-percent-of"):  # a percent setting's box (draggable-mark.js controlsOf)
            self.controls.add(attrs["data-percent-of"])
        if tag == "svg" and attrs.get("data-role") == "figure" and not self.done:
            self.svg_role, self.in_figure = attrs["role"], True
        elif self.in_figure and attrs.get("role") == "slider":
            self.handles.append({**attrs, "grip": None})
        elif self.in_figure and "fig-grip" in (attrs.get("class") or "").split() and self.handles:
            self.handles[-1]["grip"] = self.handles[-1]["grip"] or attrs

    def handle_endtag(self, tag):
        if tag == "svg" and self.in_figure:
            self.in_figure, self.done = False, True


def value_at(stops: str, pixel: float) -> float:
    """What the page's script does (draggable-mark.js valueAt): linear between the stops around the pixel."""
    points = [tuple(map(float, pair.split(":"))) for pair in stops.split()]
    ascending = points[-1][0] >= points[0][0]
    i = 0
    while i < len(points) - 2 and (pixel > points[i + 1][0] if ascending else pixel < points[i + 1][0]):
        i += 1
    (p0, v0), (p1, v1) = points[i], points[i + 1]
    return v0 if p1 == p0 else v0 + (pixel - p0) * (v1 - v0) / (p1 - p0)


@pytest.mark.parametrize(("url", "marks"), HANDLES)
def test_handles_are_sliders_in_the_servers_svg(client, url, marks):
    response = client.get(url)
    assert response.status_code == 200
    page = Figure()
    page.feed(response.get_data(as_text=True))
    assert page.form_method == "get", "the form that works without JavaScript stays"
    assert {h["data-mark"] for h in page.handles} == marks
    assert page.svg_role == "group", "a figure holding sliders is a group (an img's children are hidden)"
    for h in page.handles:
        assert h["tabindex"] == "0" and h["aria-label"] and h["aria-valuetext"], h
        low, high, now = (float(h[k]) for k in ("aria-valuemin", "aria-valuemax", "aria-valuenow"))
        assert low <= now <= high
        assert h["data-drives"] in page.controls, f"{h['data-mark']} drives no control of the form"
        assert h["aria-orientation"] == ("vertical" if h["data-axis"] == "y" else "horizontal")
        grip = h["grip"]
        assert float(grip["width"]) >= 24 and float(grip["height"]) >= 24, f"{h['data-mark']}: grip under 24 px"
        axis = "x" if h["data-axis"] == "x" else "y"
        middle = float(grip[axis]) + float(grip["width" if axis == "x" else "height"]) / 2
        tolerance = max(float(h["data-step"]), 0.02 * abs(now))
        assert value_at(h["data-stops"], middle) == pytest.approx(now, abs=tolerance), h["data-mark"]


def test_a_published_run_has_no_calibration_handles(client, real_app):
    """The typed answers are what a group's handle moves: a published run's groups are not handles."""
    context = real_app.extensions["documents"]["mmlu"].hooks.widget_context(real_app)
    settings = {p.name: p for p in find_widget("mmlu", "calibration-bars").params(context)}
    if "source" not in settings:
        pytest.skip("no published calibration run in this checkout")
    source = settings["source"].choices[-1][0]
    page = Figure()
    page.feed(client.get(f"/mmlu/widgets/calibration-bars?source={source}").get_data(as_text=True))
    assert source != "example" and page.handles == [] and page.svg_role == "img"
