"""``python -m engine mmlu evaluate`` gives lm-evaluation-harness's own answers, question by question.

tests/fixtures/harness_reference/*.json are lm_eval 0.4.13's per-question logs (``--log_samples``)
on real MMLU test questions, written by tools/harness_reference.py (read it for the exact task
configuration and command): letter (``mmlu``), option (the ``mmlu`` prompt, each option's text) and
generative (``mmlu_generative``), plain and with ``--apply_chat_template``, at 0 and 5 shots. Here
the shared evaluate command scores the same questions with the same settings, and per question:

* the prompt is the harness's, character for character;
* letter and option: every option's summed log-likelihood is within 5e-4 of the harness's, whether
  greedy decoding writes it is the harness's answer too (the pair its ``loglikelihood`` returns, as
  the model service's narrow interface answered it), and the prediction and ``correct`` are its ``acc``;
* generative: the generated text is the harness's ``resps``, the filtered response its
  ``filtered_resps``, ``correct`` its ``exact_match``, exactly.

The batch command's fast path (the shared prefix's cached keys and values, packed batches) is what
runs here: a generation's tokens are written on top of the cached header and worked examples, and
must be the harness's (whose model reads each whole prompt) character for character. With lm_eval
installed, a second test runs the harness itself on one question.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks.mmlu.server.evaluate import MMLUTask
from benchmarks.server import evaluate as shared
from benchmarks.server.multiple_choice import answer_questions

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harness_reference"
METHODS = ("letter", "option", "generative")
# float32 sums of a dozen tokens' log-probabilities differ in the fourth decimal between CPUs: on an
# AMD EPYC even transformers' own forward over the whole prompt is up to 1.4e-4 (relative 2.8e-5)
# from the references, written on another machine. Predictions and `acc` must still be equal.
LOGLIKELIHOOD_TOLERANCE = 5e-4


def references() -> list[Path]:
    return sorted(FIXTURES.glob("*shot-*.json"))


def run_ours(loaded_model, mmlu_data, reference: dict, method: str) -> tuple[list[dict], dict, dict]:
    """Our evaluate on the reference's questions: its rows, each question's result (the shared
    command's own answer_questions, recorded as it returns), and the model service's answer to each
    (context, continuation) it was asked."""
    from livescoring.scorer import Scorer

    results, answered = {}, {}
    scorer = Scorer(loaded_model)
    loglikelihood = scorer.loglikelihood

    def answering(requests, stop=None):
        got = loglikelihood(requests, stop)
        answered.update({(r.context, r.continuation): a for r, a in zip(requests, got, strict=True)})
        return got

    scorer.loglikelihood = answering

    def recording(scorer, questions, stop=None):
        got = answer_questions(scorer, questions, stop)
        for question, result in zip(questions, got, strict=True):
            results[(question["subject"], question["index"])] = result
        return got

    template = "chat" if reference["apply_chat_template"] else "plain"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shared, "answer_questions", recording)
        rows = shared.evaluate(MMLUTask(mmlu_data), scorer, reference["subjects"], "test", reference["num_fewshot"],
                               reference["questions_per_subject"], method, progress=False, template=template)
    # The batch command's fast path ran: the header and worked examples were computed once and reused
    # (a generation's tokens are written on top of their cached keys and values).
    assert scorer.prefixes.entries
    return rows, results, answered


def compare(reference: dict, method: str, rows: list[dict], results: dict, answered: dict) -> int:
    """Assert per question that ours equals the harness's; the number of questions compared."""
    samples = reference["samples"][method]
    by_question = {(r["subject"], r["index"]): r for r in rows}
    assert set(by_question) == {(s["subject"], s["index"]) for s in samples}
    template = "chat" if reference["apply_chat_template"] else "plain"
    for sample in samples:
        where = f"{sample['subject']} #{sample['index']}, {method}, {template}, {reference['num_fewshot']}-shot"
        row, result = by_question[(sample["subject"], sample["index"])], results[(sample["subject"], sample["index"])]
        assert (row["method"], row["template"], row["shots"]) == (method, template, reference["num_fewshot"]), where
        assert result["prompt"]["text"] == sample["prompt"], where
        if method == "generative":
            assert row["generated"] == sample["resps"][0][0], where
            assert row["response"] == sample["filtered_resps"][0], where
            assert float(row["correct"]) == sample["exact_match"], where
        else:
            theirs = [resp[0][0] for resp in sample["resps"]]
            ours = [option["logprob"] for option in result["options"]]
            assert [o["continuation"] for o in result["options"]] == sample["continuations"], where
            assert all(math.isclose(a, b, abs_tol=LOGLIKELIHOOD_TOLERANCE) for a, b in zip(ours, theirs, strict=True)), \
                (where, ours, theirs)
            greedy = [answered[(sample["prompt"], c)].is_greedy for c in sample["continuations"]]
            assert greedy == [resp[0][1] for resp in sample["resps"]], where
            assert float(row["correct"]) == sample["acc"], where
            assert row["prediction"] == "ABCD"[theirs.index(max(theirs))], where
    return len(samples)


@pytest.mark.model
@pytest.mark.parametrize("path", references(), ids=lambda p: p.stem)
def test_evaluate_gives_the_harness_answers_per_question(loaded_model, mmlu_data, path):
    reference = json.loads(path.read_text())
    assert reference["lm_eval"] == "0.4.13"
    compared = 0
    for method in METHODS:
        compared += compare(reference, method, *run_ours(loaded_model, mmlu_data, reference, method))
    assert compared == len(METHODS) * len(reference["subjects"]) * reference["questions_per_subject"]


def test_the_references_cover_letter_option_and_generative_plain_and_chat_at_0_and_5_shots():
    settings, greedy = set(), set()
    for path in references():
        reference = json.loads(path.read_text())
        assert set(METHODS) <= set(reference["samples"])
        assert all(len(reference["samples"][m]) >= 6 for m in METHODS)
        settings.add((reference["num_fewshot"], reference["apply_chat_template"]))
        greedy |= {resp[0][1] for m in ("letter", "option") for s in reference["samples"][m] for resp in s["resps"]}
    assert settings == {(0, False), (0, True), (5, False), (5, True)}
    assert greedy == {True, False}  # continuations the harness found greedy and not, for is_greedy to be held to


@pytest.mark.model
def test_the_harness_itself_agrees_on_a_question_when_lm_eval_is_installed(request, tmp_path):
    pytest.importorskip("lm_eval", reason="lm_eval is not installed (pip install lm_eval==0.4.13; CI does not need it)")
    loaded_model = request.getfixturevalue("loaded_model")  # only once the harness is known to be there
    mmlu_data = request.getfixturevalue("mmlu_data")
    from tools import harness_reference

    harness_reference.main(["--shots", "0", "--sides", "plain", "chat", "--subjects", "astronomy", "--questions", "1",
                            "--methods", *METHODS, "--out", str(tmp_path)])
    for path in sorted(tmp_path.glob("*.json")):
        reference = json.loads(path.read_text())
        for method in METHODS:
            assert compare(reference, method, *run_ours(loaded_model, mmlu_data, reference, method)) == 1
