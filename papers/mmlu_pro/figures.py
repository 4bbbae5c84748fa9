"""The MMLU-Pro paper's reported numbers (Wang et al. 2024, arXiv:2406.01574), each written once with
the table, figure or section it comes from. Accuracies are percentages as the paper prints them.

These figures were taken from a secondary review of the paper (../shared/seeds/002, a lead, not a
source) and attributed to the paper's own tables and figures; they have not been checked against
the paper's PDF from this machine (no internet), and the page says so where it uses them.
"""
from __future__ import annotations

# Test questions per category: the dataset card's table (TIGER-Lab/MMLU-Pro), which the release
# files match row for row (data/mmlu-pro/SOURCE.md); used only when the files are not here.
CATEGORY_SIZES = {"math": 1351, "physics": 1299, "chemistry": 1132, "law": 1101, "engineering": 969, "other": 924,
                  "economics": 844, "health": 818, "psychology": 798, "business": 789, "biology": 717,
                  "philosophy": 499, "computer science": 410, "history": 381}

# Figure 4 (MMLU against MMLU-Pro, both with chain of thought); GPT-4o's MMLU-Pro score is 72.6 in
# Table 2 (Figure 4's bar reads 72.5).
MMLU_VS_PRO = (
    {"model": "GPT-4o", "mmlu": 88.7, "pro": 72.6},
    {"model": "Claude-3-Opus", "mmlu": 86.8, "pro": 68.5},
    {"model": "GPT-4-Turbo", "mmlu": 86.5, "pro": 63.7},
    {"model": "Llama-3-70B-Instruct", "mmlu": 82.0, "pro": 56.2},
    {"model": "Llama-2-70B", "mmlu": 69.7, "pro": 37.5},
    {"model": "Gemma-7B", "mmlu": 66.0, "pro": 33.7},
)

# Table 3: direct answering (da) against chain of thought (cot), on each benchmark.
COT_VS_DIRECT = (
    {"model": "GPT-4o", "mmlu": {"da": 87.2, "cot": 88.7}, "pro": {"da": 53.5, "cot": 72.6}},
    {"model": "GPT-4-Turbo", "mmlu": {"da": 86.7, "cot": 86.5}, "pro": {"da": 48.4, "cot": 63.7}},
    {"model": "Phi-3-medium-4k-instruct", "mmlu": {"da": 78.0, "cot": 79.4}, "pro": {"da": 47.5, "cot": 55.7}},
    {"model": "Llama-3-8B", "mmlu": {"da": 66.6, "cot": 62.7}, "pro": {"da": 31.5, "cot": 35.4}},
    {"model": "Gemma-7B", "mmlu": {"da": 66.0, "cot": 62.4}, "pro": {"da": 27.0, "cot": 33.7}},
)

# Figure 5 and §6.3: lowest and highest score over 24 prompt styles (read off the figure, so
# approximate), and the widest spread §6.3 reports for each benchmark.
PROMPT_SPREAD = (
    {"model": "Llama-3-8B", "mmlu": (59.9, 64.8), "pro": (25.2, 28.7)},
    {"model": "Llama-3-8B-Instruct", "mmlu": (61.4, 66.0), "pro": (31.5, 35.2)},
)
PROMPT_STYLES = 24
WIDEST_SPREAD = {"mmlu": 10.98, "pro": 3.74}

# §5.3: 120 of GPT-4o's wrong answers, sorted by cause (per cent of the 120).
ERROR_CAUSES = (
    ("Reasoning errors", 39),
    ("Lack of specific knowledge", 35),
    ("Calculation errors", 12),
    ("No selection made", 5),
    ("Question understanding errors", 4),
    ("Generation issues", 2),
    ("Annotation errors", 2),
    ("Answer extraction errors", 1),
)
ERRORS_SAMPLED = 120

# Table 2: GPT-4o overall and in the categories the page quotes (5-shot CoT).
GPT4O_OVERALL = 72.6
GPT4O_CATEGORIES = {"math": 76.1, "engineering": 55.0, "law": 51.0}
