"""MMLU-Pro (Wang et al. 2024, arXiv 2406.01574) as one task: 14 categories, up to ten options, worked
examples from each category's validation split, the paper's letter prompt (prompt.py)."""
from __future__ import annotations

from operator import attrgetter

from ..task import MultipleChoiceTask
from . import prompt
from .data import LETTERS

TASK = MultipleChoiceTask(
    name="mmlu_pro",
    title="MMLU-Pro",
    prompt=prompt,
    group_field="category",
    group_words=("category", "categories"),
    question_splits=("test",),
    shots_split="validation",
    letters=tuple(LETTERS),
    harness_task_prefixes=("mmlu_pro_",),
    identity_fields=("question_id",),
    doc_to_choice=attrgetter("options"),
)
