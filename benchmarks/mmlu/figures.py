"""Figures from the paper (Hendrycks et al. 2020), for the scaling, group, subject and reference plots.

Values are percentages exactly as printed in the paper; every figure carries the part of the paper
it comes from. A figure the paper reports but our sources do not give is None, never a guess (Table 1 group
scores are checked against the question-weighted Average in tests/documents/test_paper_data.py).
Examples marked illustrative are the page's own worked examples, not the paper's data.
"""
from __future__ import annotations

import copy

PAPER = "Hendrycks et al. (2020), Measuring Massive Multitask Language Understanding"

_FIGURES: dict = {
    "paper": PAPER,
    "unit": "percent",
    "table_1": {
        "source": (
            "Table 1 (group scores and averages; the groups reproduce the Average with the repository's"
            " categories.py grouping, Anatomy under other)"
        ),
        "note": "Average is weighted by questions, so it differs from the plain mean of the four groups.",
        "rows": [
            {"model": "GPT-3 X-Large", "setting": "few-shot", "parameters": 175e9,
             "humanities": 40.8, "social_sciences": 50.4, "stem": 36.7, "other": 48.8, "average": 43.9},
            {"model": "UnifiedQA", "setting": "transfer", "parameters": 11e9,
             "humanities": 45.6, "social_sciences": 56.6, "stem": 40.2, "other": 54.6, "average": 48.9},
            {"model": "RoBERTa-base", "setting": "fine-tuned", "parameters": None,
             "humanities": 27.9, "social_sciences": 28.8, "stem": 27.0, "other": 27.7, "average": 27.9},
            {"model": "ALBERT-xxlarge", "setting": "fine-tuned", "parameters": None,
             "humanities": 27.2, "social_sciences": 25.7, "stem": 27.7, "other": 27.9, "average": 27.1},
            {"model": "GPT-2", "setting": "fine-tuned", "parameters": None,
             "humanities": 32.8, "social_sciences": 33.3, "stem": 30.2, "other": 33.1, "average": 32.4},
        ],
    },
    "scaling": {
        "source": (
            "Accuracies: Table 1 and Appendix A (zero-shot: Figure 10); GPT-3 sizes as the paper states them in"
            " §4.1 text (later estimates differ for the three smaller models); the shape is Figure 1(b)"
        ),
        "series": [
            {"model": "GPT-3", "setting": "few-shot", "points": [
                {"parameters": 2.7e9, "accuracy": 25.9},
                {"parameters": 6.7e9, "accuracy": 24.9},
                {"parameters": 13e9, "accuracy": 26.0},
                {"parameters": 175e9, "accuracy": 43.9},
            ]},
            {"model": "GPT-3", "setting": "zero-shot", "points": [
                {"parameters": 175e9, "accuracy": 37.7, "approximate": True},
            ]},
            {"model": "UnifiedQA", "setting": "transfer", "points": [
                {"parameters": 60e6, "accuracy": 29.3},
                {"parameters": 3e9, "accuracy": 43.7},
                {"parameters": 11e9, "accuracy": 48.9},
            ]},
        ],
    },
    "subjects": {
        "source": "Section 4.2 (text) and Figure 6; best subject almost 70%: Section 1",
        "model": "GPT-3 X-Large, few-shot",
        "rows": [
            {"subject": "us_foreign_policy", "name": "US Foreign Policy", "accuracy": 69.0, "approximate": True},
            {"subject": "college_medicine", "name": "College Medicine", "accuracy": 47.4},
            {"subject": "college_mathematics", "name": "College Mathematics", "accuracy": 35.0},
            {"subject": "elementary_mathematics", "name": "Elementary Mathematics", "accuracy": 29.9},
            {"subject": "college_chemistry", "name": "College Chemistry", "accuracy": 26.0, "approximate": True},
        ],
    },
    "reference_points": {
        "chance": {"accuracy": 25.0, "source": "Section 3 (four options)"},
        "mturk": {"accuracy": 34.5, "source": "Section 3"},
        "expert": {"accuracy": 89.8, "source": "Section 3 (estimated)"},
    },
    "splits": {
        "source": (
            "Section 3 (as the paper states them; its three splits sum to 15,904, and the repository's first"
            " complete upload, commit 8d4768d, held 285 + 1,543 + 14,080 = 15,908)"
        ),
        "dev": 285, "validation": 1540, "test": 14079, "stated_total": 15908,
        "subjects": 57, "dev_per_subject": 5, "min_test_per_subject": 100,
    },
    "calibration": {
        "source": (
            "Section 4.2 (zero-shot gap up to 24 points; RMS error 19.4 on Elementary Mathematics) and Appendix"
            " A, Figure 11 (few-shot gap up to 14 points; correlations 0.63 zero-shot, 0.81 few-shot)"
        ),
        "max_gap_zero_shot": 24.0, "max_gap_few_shot": 14.0,
        "elementary_mathematics_rms_zero_shot": 19.4,
        "correlation_zero_shot": 0.63, "correlation_few_shot": 0.81,
    },
    "law_experiment": {
        "source": "Section 5",
        "roberta_base_fine_tuned": 32.8, "with_legal_pretraining": 36.1,
    },
    "memorization_correlation": {
        "source": "Appendix B",
        "zero_shot": -0.43, "few_shot": -0.56,
    },
    "examples": {
        "illustrative": True,
        "letter_probs": {"A": 0.06, "B": 0.81, "C": 0.07, "D": 0.06},
        "groups": {"counts": [100, 300], "accuracies": [0.6, 0.3]},
        "calibration": {
            "confidences": [0.9, 0.9, 0.95, 0.85, 0.9, 0.4, 0.35, 0.45, 0.4, 0.4],
            "correct": [1, 1, 1, 0, 0, 1, 0, 1, 0, 0],
        },
    },
}


def paper_figures() -> dict:
    """All the paper's figures above, as plain JSON-able data (a fresh copy each call)."""
    return copy.deepcopy(_FIGURES)



def reference(name: str) -> float:
    """A reference level ("chance", "mturk", "expert") as a share between 0 and 1."""
    return _FIGURES["reference_points"][name]["accuracy"] / 100
