"""Live scoring: a small real model answers real MMLU questions in front of the reader.

It shows the model's current state, so it is a live widget: this document's server
hooks (``server/run_page.py``) draw it on every request.
"""
from __future__ import annotations

from widgetkit import Widget

WIDGET = Widget(
    name="live-scoring",
    title="Live scoring",
    blurb="A small model answers real MMLU questions in front of you.",
    height=700, driver="live", script=True, style=True,
)
