"""Rotation check: the live model's published runs with each question's options rotated four ways
(the widget every document shares: benchmarks/mmlu/rotation_widget.py)."""
from __future__ import annotations

from benchmarks.mmlu.rotation_widget import rotation_widget

WIDGET = rotation_widget(
    "rotation-check", "Rotation check: an answer or a position?",
    "Each question asked four times, its options rotated: how often the model stays with one answer.",
)
