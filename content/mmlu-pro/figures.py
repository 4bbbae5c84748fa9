"""The MMLU-Pro paper's reported numbers (Wang et al. 2024, arXiv:2406.01574), each written once with
the table, figure or section it comes from. Accuracies are percentages as the paper prints them.

They reached this project through a secondary review of the paper (a lead, not a source). Each was
then looked for in the authors' own publications: the abstract and §1 (copies of the arXiv HTML),
the dataset card (TIGER-Lab/MMLU-Pro on Hugging Face, the revision that came with our data files:
github.com/thomas010/third-party commit b591983, mmlu-pro/README.md) and the authors' repository
(TIGER-AI-Lab/MMLU-Pro: its README's leaderboard at commit f418b11, its cached predictions at commit
964a136). The comment above each figure says which were found there; the others are still the
review's alone, and numbers.toml and the page say so.
"""
from __future__ import annotations

# Test questions per category: the dataset card's table (TIGER-Lab/MMLU-Pro), which the release
# files match row for row (data/mmlu-pro/SOURCE.md); used only when the files are not here.
CATEGORY_SIZES = {"math": 1351, "physics": 1299, "chemistry": 1132, "law": 1101, "engineering": 969, "other": 924,
                  "economics": 844, "health": 818, "psychology": 798, "business": 789, "biology": 717,
                  "philosophy": 499, "computer science": 410, "history": 381}

# Figure 4 (MMLU against MMLU-Pro). The MMLU-Pro column is chain of thought (Table 2); the MMLU column
# mixes settings: Gemma-7B's 66.0 is its direct-answer score (Table 3), Llama-2-70B's 69.7 the MMLU score
# the authors' dataset card gives (per the fact check of issue 22; that card revision was not reached
# here). GPT-4o's MMLU-Pro score is 72.6 in Table 2 (Figure 4's bar reads 72.5). Checked: GPT-4o,
# Claude-3-Opus and Llama-3-70B-Instruct on both benchmarks (dataset card §6, "MMLU v.s. MMLU-Pro
# Results": 0.887/0.7255, 0.868/0.6845, 0.820/0.5620); GPT-4-Turbo's 63.7 (README leaderboard, 63.71);
# Llama-2-70B's 37.5 equals the authors' cached predictions (TIGER-AI-Lab/MMLU-Pro 964a136: 4,516 of
# 12,032 with the code's fixed fallback); Gemma-7B's 33.7 is the paper's, the cached predictions give
# 33.8 (4,070). Review only: the MMLU scores of GPT-4-Turbo, Llama-2-70B and Gemma-7B.
MMLU_VS_PRO = (
    {"model": "GPT-4o", "mmlu": 88.7, "pro": 72.6},
    {"model": "Claude-3-Opus", "mmlu": 86.8, "pro": 68.5},
    {"model": "GPT-4-Turbo", "mmlu": 86.5, "pro": 63.7},
    {"model": "Llama-3-70B-Instruct", "mmlu": 82.0, "pro": 56.2},
    {"model": "Llama-2-70B", "mmlu": 69.7, "pro": 37.5},
    {"model": "Gemma-7B", "mmlu": 66.0, "pro": 33.7},
)

# Table 3: direct answering (da) against chain of thought (cot), on each benchmark. Checked: GPT-4o's
# MMLU-Pro pair (dataset card §5: CoT 0.7255, Direct 0.5346) and its MMLU CoT 88.7 (card §6); the CoT
# MMLU-Pro scores of GPT-4-Turbo (63.71) and Phi-3-medium (55.70) in the README leaderboard (f418b11),
# where the 55.70 row is "Phi3-medium-4k" and "Phi-3-medium-4k-instruct" has 53.48 (the label here is
# the paper's, per the review); Llama-3-8B's 35.4 equals the cached predictions (4,255 of 12,032 with the
# code's fixed fallback) and Gemma-7B's 33.7 is one below them (33.8).
# Review only: every MMLU direct score, the other MMLU CoT scores and the other MMLU-Pro direct scores.
COT_VS_DIRECT = (
    {"model": "GPT-4o", "mmlu": {"da": 87.2, "cot": 88.7}, "pro": {"da": 53.5, "cot": 72.6}},
    {"model": "GPT-4-Turbo", "mmlu": {"da": 86.7, "cot": 86.5}, "pro": {"da": 48.4, "cot": 63.7}},
    {"model": "Phi-3-medium-4k-instruct", "mmlu": {"da": 78.0, "cot": 79.4}, "pro": {"da": 47.5, "cot": 55.7}},
    {"model": "Llama-3-8B", "mmlu": {"da": 66.6, "cot": 62.7}, "pro": {"da": 31.5, "cot": 35.4}},
    {"model": "Gemma-7B", "mmlu": {"da": 66.0, "cot": 62.4}, "pro": {"da": 27.0, "cot": 33.7}},
)

# Figure 5 and §6.3: lowest and highest score over 24 prompt styles (read off the figure, so
# approximate), and the widest spread §6.3 reports for each benchmark. Checked: the 24 styles (the
# abstract; cot_prompt_lib/tested_24_prompt_styles.txt, commit 631a126: 4 instructions × 6 formats).
# Review only: every score and spread.
PROMPT_SPREAD = (
    {"model": "Llama-3-8B", "mmlu": (59.9, 64.8), "pro": (25.2, 28.7)},
    {"model": "Llama-3-8B-Instruct", "mmlu": (61.4, 66.0), "pro": (31.5, 35.2)},
)
PROMPT_STYLES = 24
WIDEST_SPREAD = {"mmlu": 10.98, "pro": 3.74}

# §5.3: 120 of GPT-4o's wrong answers, sorted by cause (per cent of the 120). Review only: not in the
# dataset card or the repository.
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

# Table 2: GPT-4o overall, as the paper prints it (5-shot CoT); the dataset card's §5 gives 0.7255 and the
# README's leaderboard 72.55.
GPT4O_OVERALL = 72.6
# GPT-4o in every category (5-shot CoT), from the dataset card's §5 ("CoT vs Direct Evaluation"), the
# authors' own row, at the card's precision (its shares × 100). The three the review quotes from Table 2
# (math 76.1, engineering 55.0, law 51.0) are these rounded to one decimal.
GPT4O_CATEGORIES = {"biology": 86.75, "business": 78.58, "chemistry": 73.93, "computer science": 78.29,
                    "economics": 80.80, "engineering": 55.00, "health": 72.12, "history": 70.07, "law": 51.04,
                    "math": 76.09, "philosophy": 70.14, "physics": 74.67, "psychology": 79.19, "other": 77.48}
