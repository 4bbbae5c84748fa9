"""MMLU (Hendrycks et al. 2020, arXiv 2009.03300) as one task: 57 subjects, four options, worked
examples from each subject's dev split, the paper's prompt (prompt.py)."""
from __future__ import annotations

from ..task import MultipleChoiceTask
from . import prompt
from .data import LETTERS

TASK = MultipleChoiceTask(
    name="mmlu",
    title="MMLU",
    prompt=prompt,
    group_field="subject",
    group_words=("subject", "subjects"),
    question_splits=("test", "val"),  # dev holds the worked examples, so it is not asked
    shots_split="dev",
    letters=LETTERS,
    # lm-evaluation-harness's three: mmlu (letter), mmlu_generative (generative) and, scored after
    # the same lettered prompt, each option's text (option)
    methods=("letter", "option", "generative"),
    chat_template=True,
    # older harness releases put the variant first (mmlu_generative_astronomy), 0.4 last
    harness_task_prefixes=("mmlu_continuation_", "mmlu_generative_", "mmlu_flan_n_shot_generative_", "mmlu_"),
)
