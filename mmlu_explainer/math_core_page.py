"""The math core page: the page's worked examples, computed by the server and again by the reader's browser.

It shows readers (and tests, and the start-up benchmark) that the browser runs the very same
Python as the server: each row carries its arguments and the server's result, and
static/js/math-core-page.js recomputes them all in Pyodide and marks whether they match.
"""
from __future__ import annotations

import json

from flask import Blueprint, render_template

from explainers.registry import call_public

bp = Blueprint("math_core_page", __name__)

_CALIBRATION = {
    "confidences": [0.9, 0.9, 0.95, 0.85, 0.9, 0.4, 0.35, 0.45, 0.4, 0.4],
    "correct": [1, 1, 1, 0, 0, 1, 0, 1, 0, 0],
}

# (function, keyword arguments, where the example comes from)
EXAMPLES: list[tuple[str, dict, str]] = [
    ("standard_error", {"p": 0.25, "n": 100}, "§3: a guesser on a 100-question subject"),
    ("chance_band", {"n": 100}, "§3: where 95 % of guessing runs land"),
    ("chance_band", {"n": 100, "method": "exact"}, "the same band from the binomial distribution itself"),
    ("margin_of_error", {"p": 0.439, "n": 14079}, "§3: GPT-3's 43.9 % on the whole test"),
    ("confidence_interval", {"p": 0.3, "n": 100}, "the chance explorer's starting point"),
    ("confidence_interval", {"p": 0.3, "n": 100, "method": "wilson"}, "the same, Wilson interval"),
    ("is_distinguishable_from_chance", {"score": 0.3, "n": 1000}, "the explorer with 1,000 questions"),
    ("predict", {"letter_probs": {"A": 0.06, "B": 0.81, "C": 0.07, "D": 0.06}}, "§4.1: Figure 1's letter probabilities"),
    ("accuracy", {"predictions": ["B", "C", "A", "D", "B"], "keys": ["B", "A", "A", "D", "C"]},
     "§4.1: five questions"),
    ("weighted_accuracy", {"counts": [100, 300], "accuracies": [0.6, 0.3]}, "§4.1: question-weighted average"),
    ("plain_mean", {"values": [40.8, 50.4, 36.7, 48.8]}, "Table 1: GPT-3 X-Large's four groups"),
    ("average_confidence", {"confidences": _CALIBRATION["confidences"]}, "§4.2: the ten-answer example"),
    ("calibration_gap", _CALIBRATION, "§4.2: claimed minus delivered"),
    ("rms_calibration_error", {**_CALIBRATION, "bins": 2}, "§4.2: two confidence groups"),
    ("margin_of_error", {"p": 0.85, "n": 14042}, "release gate: 85 % on 14,042 questions"),
    ("gate_verdict", {"candidate": [1, 1, 0, 1, 0, 1, 1, 0], "baseline": [1, 0, 0, 1, 1, 0, 1, 0],
                      "clusters": ["law", "law", "law", "math", "math", "math", "art", "art"]},
     "release gate: eight questions, three subjects"),
    ("expected_score", {"known": 0.5}, "a model that knows half the answers"),
    ("simulate_contamination", {"accuracy": 0.45, "leaked_fraction": 0.1, "questions": 1000, "seed": 1},
     "10 % of questions leaked"),
]


def shown(value) -> str:
    """A result as readers see it: numbers to 4 significant digits (math-core-page.js formats alike)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.4g}"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    return "{" + ", ".join(f"{k}: {shown(v)}" for k, v in value.items()) + "}"


def shown_args(args: dict) -> str:
    return ", ".join(f"{name}={shown(value)}" for name, value in args.items())


@bp.get("/math-core")
def math_core():
    rows = [
        {"fn": fn, "args": args, "source": source, "shown_args": shown_args(args),
         "result": (result := call_public(fn, args)), "shown": shown(result)}
        for fn, args, source in EXAMPLES
    ]
    return render_template("math_core.html", rows=rows)
