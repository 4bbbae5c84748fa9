"""MMLU-Pro prompts, built exactly as the authors' evaluation code builds them.

The chain-of-thought prompt (§4 of the paper: 5-shot, the examples from the validation split of the
question's category) follows TIGER-AI-Lab/MMLU-Pro at commit 05c6997 (``evaluate_from_local.py``)
with its ``cot_prompt_lib/initial_prompt.txt`` (commit 13c4416): the instruction with the category
filled in and one newline, then each worked example as "Question:", the question, "Options:", the
lettered options and its chain of thought (its leading "A:" written "Answer:"), a blank line after
each, and last the question with "Answer: Let's think step by step." for the model to continue.

The letter prompt is this site's own direct-answer variant of the same layout, for scoring by the
probabilities of the ten letters (livescoring's ``letter`` method compares " A" … " J" after
"Answer:"): the worked examples keep their questions and options but give only " X" as the answer.
The paper's direct-answer runs (Table 3) are its own; their exact prompt is not published.
"""
from __future__ import annotations

from dataclasses import dataclass

from .data import LETTERS, Question

MAX_SHOTS = 5
INSTRUCTION = ("You are an expert in {category}. Below is a series of example questions (with answers) about "
               "{category} for demonstration. You will be given a question at the end, after the examples, for "
               "you to answer. First give step-by-step reasoning about how to solve the question. Then output "
               "the answer.")
COT_CUE = "Answer: Let's think step by step."
LETTER_HEADER = "The following are multiple choice questions (with answers) about {category}.\n\n"


@dataclass(frozen=True)
class PromptPart:
    """One labelled piece of a prompt, so the page can show which is which."""

    kind: str  # "header" | "shot" | "question" | "option" | "answer_cue"
    text: str


def _check(choices, shots) -> None:
    if not 2 <= len(choices) <= len(LETTERS):
        raise ValueError(f"an MMLU-Pro question has 2 to {len(LETTERS)} options, got {len(choices)}")
    if len(shots) > MAX_SHOTS:
        raise ValueError(f"at most {MAX_SHOTS} shots")


def question_block(question: str, choices) -> list[PromptPart]:
    """"Question:", the question, "Options:" and the lettered options, as the authors' code writes them."""
    parts = [PromptPart("question", f"Question:\n{question}\nOptions:\n")]
    parts += [PromptPart("option", f"{letter}. {choice}\n") for letter, choice in zip(LETTERS, choices, strict=False)]
    return parts


def _block_text(shot: Question) -> str:
    return "".join(part.text for part in question_block(shot.question, shot.options))


def cot_shot(shot: Question) -> str:
    """A worked example with its chain of thought, ending "The answer is (X)." and a blank line."""
    reasoning = shot.cot_content.replace("A: Let's think step by step.", COT_CUE)
    return _block_text(shot) + reasoning + "\n\n"


def cot_prompt_parts(subject: str, question: str, choices, shots=()) -> list[PromptPart]:
    """The paper's 5-shot chain-of-thought prompt; ''.join(p.text) is what the model reads."""
    _check(choices, shots)
    parts = [PromptPart("header", INSTRUCTION.format(category=subject) + "\n")]
    parts += [PromptPart("shot", cot_shot(shot)) for shot in shots]
    return parts + question_block(question, choices) + [PromptPart("answer_cue", COT_CUE)]


def letter_shot(shot: Question) -> str:
    return _block_text(shot) + f"Answer: {shot.answer}\n\n"


def prompt_parts(subject: str, question: str, choices, shots=()) -> list[PromptPart]:
    """The direct-answer prompt for ten-letter scoring, ending "Answer:" (livescoring's prompt format)."""
    _check(choices, shots)
    parts = [PromptPart("header", LETTER_HEADER.format(category=subject))]
    parts += [PromptPart("shot", letter_shot(shot)) for shot in shots]
    return parts + question_block(question, choices) + [PromptPart("answer_cue", "Answer:")]


def build_prompt(subject: str, question: str, choices, shots=(), chain_of_thought: bool = False) -> str:
    build = cot_prompt_parts if chain_of_thought else prompt_parts
    return "".join(part.text for part in build(subject, question, choices, shots))
