"""Which questions flipped between two runs: the release gate's runs question by question.

The flips view every document with a release gate shares (``benchmarks.flips_widget``); the gate
links to it. Drawn by the server for the published runs; a reader's own files are read in the page.
"""
from __future__ import annotations

from benchmarks.flips_widget import flips_widget

WIDGET = flips_widget("question-flips")
