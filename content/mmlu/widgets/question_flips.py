"""Which questions flipped between two runs: the release gate's runs question by question.

The flips view every document with a release gate shares (``benchmarks.flips_widget``); the gate
links to it. Drawn by the server for the published runs; a reader's own files are read in the page.
Each question links to the live form of its benchmark (``LIVE_FORMS``): MMLU's on the MMLU
document's page, MMLU-Pro's on the MMLU-Pro document's.
"""
from __future__ import annotations

from benchmarks.flips_widget import LiveForm, flips_widget

# By benchmark name; MMLU's first: a question of a benchmark without a form goes there, by its text.
LIVE_FORMS = {"mmlu": LiveForm("/mmlu/run", shots=0), "mmlu_pro": LiveForm("/mmlu-pro/run", shots=5)}
WIDGET = flips_widget("question-flips", LIVE_FORMS)
