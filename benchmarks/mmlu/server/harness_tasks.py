"""lm-evaluation-harness's three MMLU tasks as its code builds their prompts and reads their answers.

Read from EleutherAI/lm-evaluation-harness at commit 4e7e0d47f33bc71070c1d38394bafbb52b117163
(``HARNESS_COMMIT``; the page's sources name the same files):

* ``mmlu`` (lm_eval/tasks/mmlu/default/_default_template_yaml and the per-subject YAML files): the
  description "The following are multiple choice questions (with answers) about {subject}.\\n\\n",
  ``doc_to_text`` "{{question.strip()}}\\nA. {{choices[0]}}\\n…D. {{choices[3]}}\\nAnswer:", the
  choices "A" … "D", worked examples the first k of the dev split. It is the MMLU paper's own
  prompt (benchmarks/mmlu/prompt.py), whose pieces are reused here.
* ``mmlu_continuation`` (lm_eval/tasks/mmlu/continuation/_continuation_template_yaml): the
  description "The following are questions (with answers) about {subject}.\\n\\n", ``doc_to_text``
  "Question: {{question.strip()}}\\nAnswer:", each option's text as a continuation. No metric list,
  so the multiple-choice defaults (lm_eval/api/registry.py): ``acc`` (the largest summed
  log-likelihood) and ``acc_norm`` (each divided by the option's length in characters,
  lm_eval/api/task.py, ``process_results``).
* ``mmlu_generative`` (lm_eval/tasks/mmlu/generative/_default_template_yaml, version 3.0): the
  ``mmlu`` prompt; ``generate_until`` with ``until: ["</s>", "\\n"]`` (the model's end-of-text
  string is added by ``handle_stop_sequences``, lm_eval/models/utils.py) and the Hugging Face
  model's ``max_gen_toks`` of 256 (lm_eval/models/huggingface.py); the ``get_response`` filter
  (a regex keeping the first line, ``remove_whitespace``, a regex dropping trailing whitespace,
  ``take_first``; lm_eval/filters/extraction.py) and ``exact_match`` against "A" … "D" with
  ``ignore_case`` and ``ignore_punctuation`` (lm_eval/api/metrics.py).

With ``--apply_chat_template`` (lm_eval/api/task.py ``fewshot_context`` and ``build_qa_turn``,
lm_eval/api/utils.py ``Message``): the description becomes the system message, each worked example
a user turn and an assistant turn (``--fewshot_as_multiturn``, the command line's default with a
chat template, lm_eval/config/evaluate_config.py), the question the last user turn, rendered by the
tokenizer's ``apply_chat_template(..., add_generation_prompt=True)``. For the log-likelihood tasks
the target delimiter then becomes "" (``construct_requests``): "A" or the option's text is scored
right after the template's assistant header.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass

from benchmarks.mmlu import prompt
from benchmarks.mmlu.data import LETTERS
from benchmarks.mmlu.prompt import PromptPart

HARNESS_COMMIT = "4e7e0d47f33bc71070c1d38394bafbb52b117163"
TASKS = ("mmlu", "mmlu_continuation", "mmlu_generative")
STOP = ("</s>", "\n")  # mmlu_generative's generation_kwargs.until
HARNESS_MAX_GEN_TOKS = 256
TARGET_DELIMITER = " "  # the harness's defaults, which the MMLU tasks keep
FEWSHOT_DELIMITER = "\n\n"
INVALID = "[invalid]"  # RegexFilter's fallback when its pattern finds nothing
_FIRST_LINE = re.compile(r"^(.*?)(?=\n|$)")
_NO_TRAILING_SPACE = re.compile(r"^(.*?)\s*$")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


@dataclass(frozen=True)
class Message:
    """One turn of a prompt (the harness's Message): in plain text its content, then its delimiter."""

    role: str  # "system" | "user" | "assistant"
    content: str
    delimiter: str = ""


def description(task: str, subject: str) -> str:
    if task == "mmlu_continuation":
        return f"The following are questions (with answers) about {subject.replace('_', ' ')}.\n\n"
    return prompt.header(subject)


def doc_to_text(task: str, question: str, choices) -> str:
    if task == "mmlu_continuation":
        return f"Question: {question.strip()}\nAnswer:"
    return "".join(part.text for part in prompt.format_question(question, choices))


def doc_to_target(task: str, shot) -> str:
    """A worked example's answer: its letter, or for mmlu_continuation the text of its right option."""
    return shot.choices[LETTERS.index(shot.answer)] if task == "mmlu_continuation" else shot.answer


def messages(task: str, subject: str, question: str, choices, shots=()) -> list[Message]:
    """The prompt as the harness's turns: the description, each worked example, then the question."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}")
    turns = [Message("system", description(task, subject))]
    for shot in shots:
        turns += [Message("user", doc_to_text(task, shot.question, shot.choices), TARGET_DELIMITER),
                  Message("assistant", doc_to_target(task, shot), FEWSHOT_DELIMITER)]
    return turns + [Message("user", doc_to_text(task, question, choices))]


def plain_text(turns: list[Message]) -> str:
    """The prompt without a chat template: every turn's content and delimiter, joined."""
    return "".join(turn.content + turn.delimiter for turn in turns)


def chat_turns(turns: list[Message]) -> list[dict]:
    """The turns as the chat template reads them (the delimiters belong to plain text only)."""
    return [{"role": turn.role, "content": turn.content} for turn in turns]


def chat_renderer(tokenizer):
    """The model's chat template as the harness's HFLM.apply_chat_template calls it (turns → text,
    ending in the assistant's header unless ``add_generation_prompt=False``), or None when the
    tokenizer has none."""
    if not getattr(tokenizer, "chat_template", None):
        return None
    from jinja2.exceptions import TemplateError

    def render(turns: list[dict], add_generation_prompt: bool = True) -> str:
        try:
            return tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=add_generation_prompt)
        except TemplateError:  # a template that refuses a system turn: the harness retries without it
            return tokenizer.apply_chat_template([t for t in turns if t["role"] != "system"], tokenize=False,
                                                 add_generation_prompt=add_generation_prompt)
    return render


class HarnessPrompt:
    """A task's prompt as the scorer's prompt format (``prompt_parts``), plain or in a chat template.

    ``render`` is the model's chat template (turns → text, see :func:`chat_renderer`) or None for
    plain text. Plain parts keep the header and worked examples apart, so the scorer reuses their
    key/value cache. In a chat template the text is the whole rendering, as the harness builds it;
    it is split into the same parts (the system turn, each worked example's two turns, the rest)
    where the template renders each leading run of turns as a prefix of the whole (ChatML
    templates such as SmolLM2's do), so the batch command reuses their cache there too, and the
    parts count the worked examples; otherwise it is one part. The scorer reuses only the longest
    common token prefix, so the split never changes what the model reads."""

    def __init__(self, task: str, render=None):
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}")
        self.task, self.render = task, render

    def prompt_parts(self, subject: str, question: str, choices, shots=()) -> list[PromptPart]:
        turns = messages(self.task, subject, question, choices, shots)
        if self.render is not None:
            whole = self.render(chat_turns(turns))
            parts, done = [], ""
            try:
                for end, kind in [(1, "header")] + [(2 + 2 * i, "shot") for i in range(len(shots))]:
                    head = self.render(chat_turns(turns[:end]), add_generation_prompt=False)
                    if not (head.startswith(done) and whole.startswith(head)) or head == done:
                        return [PromptPart("chat", whole)]
                    parts.append(PromptPart(kind, head[len(done):]))
                    done = head
            except TypeError:  # a render that takes the turns only
                return [PromptPart("chat", whole)]
            return parts + [PromptPart("question", whole[len(done):])]
        shot_texts = [plain_text(turns[i:i + 2]) for i in range(1, len(turns) - 1, 2)]
        return ([PromptPart("header", plain_text(turns[:1]))] + [PromptPart("shot", text) for text in shot_texts]
                + [PromptPart("question", plain_text(turns[-1:]))])

    def text(self, subject: str, question: str, choices, shots=()) -> str:
        return "".join(part.text for part in self.prompt_parts(subject, question, choices, shots))

    @property
    def delimiter(self) -> str:
        """What the log-likelihood tasks put between this prompt and the scored letter or option."""
        return "" if self.render is not None else TARGET_DELIMITER


def regex_filter(response: str, pattern: re.Pattern) -> str:
    """The harness's RegexFilter on one response (group_select 0): its first match, stripped."""
    found = pattern.findall(response)
    return found[0].strip() if found else INVALID


def get_response(generated: str) -> str:
    """mmlu_generative's get_response filter: the first line, without surrounding whitespace."""
    first_line = regex_filter(generated, _FIRST_LINE)
    return regex_filter(first_line.strip(), _NO_TRAILING_SPACE)


def exact_match(prediction: str, reference: str) -> bool:
    """The task's exact_match with ignore_case and ignore_punctuation, for one response."""
    return prediction.lower().translate(_NO_PUNCTUATION) == reference.lower().translate(_NO_PUNCTUATION)


def generated_letter(response: str, letters=LETTERS) -> str | None:
    """The letter a filtered response matches under exact_match, or None (the harness scores it 0)."""
    return next((letter for letter in letters if exact_match(response, letter)), None)


def per_character(logprobs: dict[str, float], choices) -> dict[str, float]:
    """acc_norm's values: each option's summed log-likelihood over its length in characters."""
    return {letter: logprobs[letter] / len(choice) for letter, choice in zip(LETTERS, choices, strict=True)}


def best(values: dict[str, float]) -> str:
    """The letter with the largest value; ties go to the first, as numpy's argmax."""
    return max(values, key=values.get)
