"""A benchmark as one typed task, sans I/O (it ships in the browser's wheel), in the spirit of
lm-evaluation-harness's task files: what a question is made of and how it is asked and scored.

Each benchmark package defines one :class:`MultipleChoiceTask` as ``TASK`` in its ``task.py``;
benchmarks/registry.py finds them. The shared layers (``evaluate``, the live routes, run files, the
gate, the published runs) take this object and never name a particular benchmark. A benchmark's
reader (its ``server/reader.py``) supplies the questions; the task says what to do with them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from types import ModuleType


@dataclass(frozen=True)
class MultipleChoiceTask:
    name: str  # lm-evaluation-harness's task name ("mmlu", "mmlu_pro"): the command's benchmark word
    title: str  # as readers see it: "MMLU"
    prompt: ModuleType  # prompt_parts(group, question, choices, shots), build_prompt, MAX_SHOTS
    group_field: str  # the questions' and run rows' group field: "subject", "category"
    group_words: tuple[str, str]  # ("subject", "subjects"): the word, its plural (the --subjects option)
    question_splits: tuple[str, ...]  # the splits a question may come from
    shots_split: str  # the split the worked examples come from
    letters: tuple[str, ...]  # the option letters, as many as the most options a question has
    methods: tuple[str, ...] = ("letter", "option")  # scoring methods evaluate offers (benchmarks/server/multiple_choice.py)
    chat_template: bool = False  # whether evaluate can build the prompt in the model's chat template
    # lm-evaluation-harness task names of this benchmark's per-group tasks, as prefixes of a
    # ``samples_<task>_<date>.jsonl`` file's task (mmlu_astronomy, mmlu_generative_astronomy)
    harness_task_prefixes: tuple[str, ...] = ()
    identity_fields: tuple[str, ...] = ()  # run-row fields naming a question before its group (MMLU-Pro's question_id)
    doc_to_choice: Callable[[object], Sequence[str]] = field(default=attrgetter("choices"), compare=False)
    doc_to_target: Callable[[object], str] = field(default=attrgetter("answer"), compare=False)

    @property
    def groups_option(self) -> str:
        """The plural group word: the command's option (``--subjects``) and the summary's key."""
        return self.group_words[1]

    @property
    def max_shots(self) -> int:
        return self.prompt.MAX_SHOTS

    def characters(self, doc) -> int:
        """A question's length in characters of its question and options: what scoring it costs, roughly."""
        return len(doc.question) + sum(len(choice) for choice in self.doc_to_choice(doc))
