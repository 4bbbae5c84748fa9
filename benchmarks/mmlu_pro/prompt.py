"""MMLU-Pro prompts, built exactly as the authors' evaluation code builds them.

The chain-of-thought prompt (§4 of the paper: 5-shot, the examples from the validation split of the
question's category) follows TIGER-AI-Lab/MMLU-Pro at commit 05c6997: ``evaluate_from_local.py``
reads ``cot_prompt_lib/initial_prompt.txt`` (that commit's text, written in 2ed4dfc, 2024-05-23;
the "You are an expert in …" header some copies show is the older 13c4416 text), puts the category
in place of its "{$}" and adds one newline. The file already ends in three, so four newlines
(three blank lines) come before the first "Question:". Then each worked example as "Question:", a
newline, the question, "Options:", one "X. option" line per option (the validation split's "N/A"
fillers dropped) and its chain of thought (its leading "A: Let's think step by step." written
"Answer: Let's think step by step."), with a blank line after each; last the test question in the
same layout, ending "Answer: Let's think step by step." for the model to continue. That script
drops worked examples while the prompt has 2,048 tokens or more (4,096 less the 2,048 it may
generate; this site's live chain of thought also drops them while the prompt does not fit), decodes
greedily for up to 2,048 new tokens and stops at "Question:".

The API models (GPT-4o, Claude-3, Gemini-1.5) were run by the other script at that commit,
``evaluate_from_api.py``, whose prompt differs: its own instruction, "Question: " and "Options: "
each followed by text on the same line, always all five of the category's examples, the test
question also ending "Answer: Let's think step by step." and a blank line, sent as one user
message with ``max_tokens=4000`` and no stop sequence. ``api_prompt`` writes it.

This site strips whitespace from the test options (see ``dataset.py``); given the file's own
options, both builders write the authors' bytes (``tests/documents/test_mmlu_pro_prompt.py``).

The letter prompt is this site's own direct-answer variant of the same layout, for scoring by the
probabilities of the ten letters (livescoring's ``letter`` method compares " A" … " J" after
"Answer:"): the worked examples keep their questions and options but give only " X" as the answer.
The paper's direct-answer runs (Table 3) are its own; their exact prompt is not published.
"""
from __future__ import annotations

from dataclasses import dataclass

from .data import LETTERS, Question

MAX_SHOTS = 5
# cot_prompt_lib/initial_prompt.txt at TIGER-AI-Lab/MMLU-Pro 05c6997, byte for byte ("{$}" is the category)
INSTRUCTION = ('The following are multiple choice questions (with answers) about {$}. Think step by step and then '
               'finish your answer with "the answer is (X)" where X is the correct letter choice.\n\n\n')
# evaluate_from_api.py at 05c6997: its instruction, written in the script itself
API_INSTRUCTION = ('The following are multiple choice questions (with answers) about {category}. Think step by step '
                   'and then output the answer in the format of "The answer is (X)" at the end.\n\n')
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


def header(subject: str) -> str:
    """The instruction as evaluate_from_local.py writes it: the file's text, the category for "{$}", one more newline."""
    return INSTRUCTION.replace("{$}", subject) + "\n"


def cot_prompt_parts(subject: str, question: str, choices, shots=()) -> list[PromptPart]:
    """The paper's 5-shot chain-of-thought prompt; ''.join(p.text) is what the model reads."""
    _check(choices, shots)
    parts = [PromptPart("header", header(subject))]
    parts += [PromptPart("shot", cot_shot(shot)) for shot in shots]
    return parts + question_block(question, choices) + [PromptPart("answer_cue", COT_CUE)]


def _api_example(question: str, choices, cot_content: str = "") -> str:
    reasoning = cot_content or "Let's think step by step."
    reasoning = reasoning[3:] if reasoning.startswith("A: ") else reasoning
    options = "".join(f"{letter}. {choice}\n" for letter, choice in zip(LETTERS, choices, strict=False))
    return f"Question: {question}\nOptions: {options}Answer: {reasoning}\n\n"


def api_prompt(subject: str, question: str, choices, shots=()) -> str:
    """The user message evaluate_from_api.py (05c6997) sends: its instruction, the examples, the question.

    The script itself always sends all of the category's validation examples (five)."""
    _check(choices, shots)
    examples = "".join(_api_example(shot.question, shot.options, shot.cot_content) for shot in shots)
    return API_INSTRUCTION.format(category=subject) + examples + _api_example(question, choices)


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
