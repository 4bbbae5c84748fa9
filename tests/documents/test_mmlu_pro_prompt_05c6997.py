"""MMLU-Pro's chain-of-thought prompt against the authors' code at TIGER-AI-Lab/MMLU-Pro commit 05c6997.

The expected prompts are written out here again from what the authors' two scripts do, not from
benchmarks/mmlu_pro/prompt.py, and read the release's Parquet files directly (not through dataset.py):

- evaluate_from_local.py (open models): the text of cot_prompt_lib/initial_prompt.txt (below, byte for
  byte) with "{$}" replaced by the category, then one newline; for each of the category's first k
  validation rows and then the test question: "Question:", newline, the question, newline,
  "Options:", newline, "X. option" and a newline per option (rows' "N/A" fillers left out); an
  example ends with its cot_content ("A: Let's think step by step." written "Answer: …") and two
  newlines, the test question with "Answer: Let's think step by step.".
- evaluate_from_api.py (GPT-4o, Claude, Gemini): its own instruction and two newlines; each example
  "Question: " question, newline, "Options: " and the option lines, "Answer: " and the reasoning
  without its leading "A: ", two newlines; the test question the same with "Let's think step by step."

The page's own display of the prompt (section 09's text blocks and the prompt diagram) is checked
against prompt.py at the end.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.mmlu_pro import prompt
from benchmarks.mmlu_pro.data import Question
from benchmarks.mmlu_pro.server import data_dir

ROOT = Path(__file__).resolve().parents[2]
DATA = data_dir({})
HAVE_DATA = (DATA / "test-00000-of-00001.parquet").is_file()

# git show 05c6997:cot_prompt_lib/initial_prompt.txt (blob c00e3606b2ef2adff698ac250791ae3b9b7e15ba, 182 bytes)
INITIAL_PROMPT_TXT = (b'The following are multiple choice questions (with answers) about {$}. Think step by step and then '
                      b'finish your answer with "the answer is (X)" where X is the correct letter choice.\n\n\n')
API_HEAD = ('The following are multiple choice questions (with answers) about {}. Think step by step and then output '
            'the answer in the format of "The answer is (X)" at the end.\n\n')


def test_the_instruction_is_the_files_bytes():
    assert len(INITIAL_PROMPT_TXT) == 182
    assert prompt.INSTRUCTION.encode("utf-8") == INITIAL_PROMPT_TXT
    assert "expert" not in prompt.INSTRUCTION  # the 13c4416 header, replaced in 2ed4dfc before the paper


def _rows(split):
    import pyarrow.parquet as parquet

    return parquet.read_table(DATA / f"{split}-00000-of-00001.parquet").to_pylist()


def _kept(row):
    return [option for option in row["options"] if option != "N/A"]  # the authors' preprocess: only exact "N/A"


def local_prompt(row, validation, k):
    examples = [r for r in validation if r["category"] == row["category"]][:k]

    def block(r):
        lines = "".join(f"{'ABCDEFGHIJ'[i]}. {option}\n" for i, option in enumerate(_kept(r)))
        return "Question:\n" + r["question"] + "\nOptions:\n" + lines

    text = INITIAL_PROMPT_TXT.decode("utf-8").replace("{$}", row["category"]) + "\n"
    for r in examples:
        text += block(r) + r["cot_content"].replace("A: Let's think step by step.", "Answer: Let's think step by step.")
        text += "\n\n"
    return text + block(row) + "Answer: Let's think step by step."


def api_prompt(row, validation):
    def block(question, options, reasoning):
        lines = "".join(f"{'ABCDEFGHIJ'[i]}. {option}\n" for i, option in enumerate(options))
        return f"Question: {question}\nOptions: {lines}Answer: {reasoning}\n\n"

    text = API_HEAD.format(row["category"])
    for r in (r for r in validation if r["category"] == row["category"]):
        reasoning = r["cot_content"]
        text += block(r["question"], _kept(r), reasoning[3:] if reasoning.startswith("A: ") else reasoning)
    return text + block(row["question"], _kept(row), "Let's think step by step.")


def _shot(row, index):
    return Question(question_id=row["question_id"], split="validation", index=index, category=row["category"],
                    src=row["src"], question=row["question"], options=tuple(_kept(row)), answer=row["answer"],
                    cot_content=row["cot_content"], raw_options=tuple(row["options"]))


def _sample(test):
    """Each category's first and last test question, every 400th row, and the odd ones: 3 options, padded
    options, a repeated option (8584), control characters."""
    picked = {}
    for row in test:
        picked.setdefault(("first", row["category"]), row)
        picked[("last", row["category"])] = row
    for number, row in enumerate(test):
        odd = (len(row["options"]) == 3 or row["question_id"] == 8584 or any(o != o.strip() for o in row["options"])
               or re.search("[\x07\x08\x0b\t]", row["question"]))
        if number % 400 == 0 or (odd and len([k for k in picked if k[0] == "odd"]) < 40):
            picked[("odd", row["question_id"])] = row
    return list(picked.values())


@pytest.mark.skipif(not HAVE_DATA, reason="the MMLU-Pro release is not in MMLU_PRO_DATA_DIR")
@pytest.mark.parametrize("k", [0, 5])
def test_local_prompt_is_the_authors_byte_for_byte(k):
    test, validation = _rows("test"), _rows("validation")
    questions = _sample(test) + validation  # validation questions too, as the paper's examples are
    assert len(questions) > 100
    for row in questions:
        shots = [_shot(r, i) for i, r in enumerate(r for r in validation if r["category"] == row["category"])][:k]
        built = prompt.build_prompt(row["category"], row["question"], _kept(row), shots, chain_of_thought=True)
        assert built == local_prompt(row, validation, k), row["question_id"]
        assert built.count("Question:\n") == k + 1 if "Question:\n" not in row["question"] else True


@pytest.mark.skipif(not HAVE_DATA, reason="the MMLU-Pro release is not in MMLU_PRO_DATA_DIR")
def test_the_sites_shots_are_the_authors_examples():
    """dataset.py's shots (options stripped, fillers dropped) give the same bytes: validation has no padded option."""
    from benchmarks.mmlu_pro.server.reader import MMLUProData

    data, validation = MMLUProData(DATA), _rows("validation")
    for row in _rows("test")[::997]:
        built = prompt.build_prompt(row["category"], row["question"], _kept(row), data.shots(row["category"], 5),
                                    chain_of_thought=True)
        assert built == local_prompt(row, validation, 5)


@pytest.mark.skipif(not HAVE_DATA, reason="the MMLU-Pro release is not in MMLU_PRO_DATA_DIR")
def test_api_prompt_is_the_authors_byte_for_byte():
    test, validation = _rows("test"), _rows("validation")
    for row in _sample(test)[:60]:
        shots = [_shot(r, i) for i, r in enumerate(r for r in validation if r["category"] == row["category"])]
        assert len(shots) == 5
        assert prompt.api_prompt(row["category"], row["question"], _kept(row), shots) == api_prompt(row, validation)


def test_a_small_prompt_by_hand():
    """Four newlines after the instruction, a blank line after each example, no newline after the cue."""
    shot = Question(question_id=0, split="validation", index=0, category="law", src="", question="Q1?",
                    options=("x", "y"), answer="B", cot_content="A: Let's think step by step. R. The answer is (B).",
                    raw_options=("x", "y", "N/A"))
    text = prompt.build_prompt("law", "Q2?", ["u", "v", "w"], [shot], chain_of_thought=True)
    assert text == ('The following are multiple choice questions (with answers) about law. Think step by step and then '
                    'finish your answer with "the answer is (X)" where X is the correct letter choice.\n\n\n\n'
                    "Question:\nQ1?\nOptions:\nA. x\nB. y\nAnswer: Let's think step by step. R. The answer is (B).\n\n"
                    "Question:\nQ2?\nOptions:\nA. u\nB. v\nC. w\nAnswer: Let's think step by step.")
    api = prompt.api_prompt("law", "Q2?", ["u", "v", "w"], [shot])
    assert api == ('The following are multiple choice questions (with answers) about law. Think step by step and then '
                   'output the answer in the format of "The answer is (X)" at the end.\n\n'
                   "Question: Q1?\nOptions: A. x\nB. y\nAnswer: Let's think step by step. R. The answer is (B).\n\n"
                   "Question: Q2?\nOptions: A. u\nB. v\nC. w\nAnswer: Let's think step by step.\n\n")


# The page: section 09 shows both layouts with placeholders, and the diagram quotes the instruction.
SECTION = ROOT / "content" / "mmlu-pro" / "sections" / "09-experimental-setup.md"
DIAGRAMS = [ROOT / "content" / "mmlu-pro" / "diagrams" / name
            for name in ("prompt-anatomy.svg", "prompt-anatomy.wide.svg")]
PLACEHOLDER_SHOT = Question(question_id=0, split="validation", index=0, category="{category}", src="",
                            question="{example question}", options=("{option}", "{option}"), answer="A",
                            cot_content="A: Let's think step by step. {worked reasoning} The answer is (X).",
                            raw_options=("{option}", "{option}"))


def _text_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```text\n(.*?)\n```$", markdown, flags=re.S | re.M)


def test_the_page_shows_the_prompt_prompt_py_builds():
    blocks = _text_blocks(SECTION.read_text(encoding="utf-8"))
    assert len(blocks) == 2, "section 09 shows the local script's prompt and the API script's, in that order"
    local = prompt.build_prompt("{category}", "{test question}", ["{option}", "{option}"], [PLACEHOLDER_SHOT],
                                chain_of_thought=True)
    api = prompt.api_prompt("{category}", "{test question}", ["{option}", "{option}"], [PLACEHOLDER_SHOT])
    assert blocks[0] == local
    assert blocks[1] == api.rstrip("\n") and api.endswith("Answer: Let's think step by step.\n\n")


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda p: p.name)
def test_the_diagram_quotes_prompt_py(path):
    """Every line the diagram quotes (class dg-quote), cut at its ellipses, is in the prompt prompt.py builds
    (white space compared as single spaces: the diagram puts what follows "Question:" on a line of its own too)."""
    svg = path.read_text(encoding="utf-8")
    local = prompt.build_prompt("{category}", "…", ["…"] * 10, [PLACEHOLDER_SHOT], chain_of_thought=True)
    reference = " ".join(local.split())
    quoted = re.findall(r'class="dg-(?:muted|text) dg-quote"[^>]*>([^<]*)<', svg)
    assert len(quoted) >= 10, "mark the diagram's prompt lines with the class dg-quote"
    quoted = [line.replace("&quot;", '"').replace("&amp;", "&").replace("&#39;", "'") for line in quoted]
    for line in quoted:
        for piece in (" ".join(p.split()) for p in line.split("…")):
            assert piece in reference, f"{path.name}: {piece!r} is not in the prompt prompt.py builds"
    joined = " ".join(" ".join(line.split()) for line in quoted)
    assert " ".join(prompt.INSTRUCTION.replace("{$}", "{category}").split()) in joined  # the whole instruction
    assert "expert" not in svg
