"""Same question, three scorers: one real MMLU question scored by the live model the three ways
lm-evaluation-harness's MMLU tasks score it, with and without the model's chat template.

It runs the model for the reader, so it is a live widget: the lesson's server hooks
(``server/three_scorers.py``) draw it on every request and answer its form.
"""
from __future__ import annotations

from widgetkit import Widget

WIDGET = Widget(
    name="three-scorers",
    title="Same question, three scorers",
    blurb="One real MMLU question, scored by a live model by letter, by full answer and by a generated reply, "
          "with and without its chat template: the prompts and the decisions side by side.",
    height=760, driver="live", script=True, style=True,
)
