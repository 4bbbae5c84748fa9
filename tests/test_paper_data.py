"""The paper's Table 1, checked against the real data: each Average is the question-weighted
mean of its four group scores (§4.2 "average weighted accuracy")."""
from __future__ import annotations

import csv

from explainers import paper_figures, weighted_accuracy
from mmlu_explainer.config import default_config

GROUP_KEYS = {"humanities": "humanities", "social sciences": "social_sciences", "STEM": "stem", "other": "other"}


def test_table_1_averages_are_the_question_weighted_means_of_the_groups():
    # Weighting by the released test counts (humanities 4,705, social sciences 3,077, STEM 3,018,
    # other 3,242) reproduces every printed Average to 0.1 points, which also checks that the
    # group scores were transcribed correctly.
    counts = dict.fromkeys(GROUP_KEYS.values(), 0)
    with open(default_config()["MMLU_DATA_DIR"] / "subjects.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            counts[GROUP_KEYS[row["group"]]] += int(row["test"])
    rows = paper_figures()["table_1"]["rows"]
    assert [row["model"] for row in rows] == ["GPT-3 X-Large", "UnifiedQA", "RoBERTa-base", "ALBERT-xxlarge", "GPT-2"]
    for row in rows:
        groups = list(counts)
        weighted = 100 * weighted_accuracy([counts[g] for g in groups], [row[g] / 100 for g in groups])
        assert round(weighted, 1) == row["average"], row["model"]
