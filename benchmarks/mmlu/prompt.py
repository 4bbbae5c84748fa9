"""Build an MMLU prompt exactly as the evaluation does.

This follows EleutherAI lm-evaluation-harness's default ``mmlu`` task character for character
(tests/model/test_harness_equality.py holds it to the harness's own prompts): a header
naming the subject, k worked examples taken from the subject's dev split in file order, then the
question ending in "Answer:". The model's next token is then compared across " A", " B", " C"
and " D". The original Hendrycks et al. code (hendrycks/test, evaluate.py) builds the same prompt
but for two details, so it is not byte for byte the same: its ``format_subject`` puts a space
before each word of the subject, so the header reads "about  abstract algebra" with two spaces,
and it does not strip the question's text.
"""
from __future__ import annotations

from dataclasses import dataclass

from .data import LETTERS, Question

MAX_SHOTS = 5


@dataclass(frozen=True)
class PromptPart:
    """One labelled piece of a prompt, so pages can highlight it (Figure 1 of the paper)."""

    kind: str  # "header" | "shot" | "question" | "option" | "answer_cue"
    text: str


def header(subject: str) -> str:
    return f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"


def format_question(question: str, choices: tuple[str, ...] | list[str]) -> list[PromptPart]:
    """The question, its four lettered options and the "Answer:" cue (no answer filled in)."""
    parts = [PromptPart("question", question.strip() + "\n")]
    parts += [PromptPart("option", f"{letter}. {choice}\n") for letter, choice in zip(LETTERS, choices, strict=False)]
    parts.append(PromptPart("answer_cue", "Answer:"))
    return parts


def format_shot(shot: Question) -> str:
    """A solved dev example: the question block followed by " {key}" and a blank line."""
    return "".join(p.text for p in format_question(shot.question, shot.choices)) + f" {shot.answer}\n\n"


def prompt_parts(subject: str, question: str, choices, shots: list[Question] | tuple[Question, ...] = ()) -> list[PromptPart]:
    """All parts of the prompt in order; ''.join(p.text) is the exact text the model reads."""
    if len(choices) != 4:
        raise ValueError("an MMLU question has exactly four choices")
    if len(shots) > MAX_SHOTS:
        raise ValueError(f"at most {MAX_SHOTS} shots")
    parts = [PromptPart("header", header(subject))]
    parts += [PromptPart("shot", format_shot(shot)) for shot in shots]
    parts += format_question(question, choices)
    return parts


def build_prompt(subject: str, question: str, choices, shots=()) -> str:
    return "".join(part.text for part in prompt_parts(subject, question, choices, shots))
