"""Prefix reuse and batching change no number: the real model, fast paths against the reference path.

The reference is the scorer with ``reuse_prefix=False``: each question alone, one forward pass over
its whole prompt, logits at every position, as lm-evaluation-harness runs it. The fast path keeps
the shared prefix's key/value cache, runs several questions per pass (right-padded, masked) and
applies the language-model head only where a log-probability is read. Every comparison allows
1e-5 in a probability and requires the same prediction.
"""
from __future__ import annotations

import json
import random
import threading
from types import SimpleNamespace

import pytest

from benchmarks.mmlu import prompt
from benchmarks.mmlu.server.evaluate import MMLUTask
from benchmarks.server import evaluate as shared
from benchmarks.server.multiple_choice import answer_question, answer_questions, prepare, read
from benchmarks.server.summary import summarise
from livescoring.model import ModelSettings
from livescoring.pool import twin
from livescoring.scorer import Generation, Loglikelihood, Scorer
from livescoring.worker import READY, ScoringService

pytestmark = pytest.mark.model
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def reference(loaded_model) -> Scorer:
    return Scorer(loaded_model, reuse_prefix=False)


def sample(mmlu_data, count: int, seed: int) -> list:
    """Real test questions from random subjects (seeded, so a failure can be rerun)."""
    rng = random.Random(seed)
    subjects = rng.sample(sorted(mmlu_data.subjects), count)
    return [rng.choice(mmlu_data.questions(s, "test")) for s in subjects]


def request(mmlu_data, q, shots: int, method: str = "letter") -> dict:
    return {"prompt_format": prompt, "subject": q.subject, "question": q.question, "choices": q.choices,
            "shots": mmlu_data.questions(q.subject, "dev")[:shots], "method": method, "key": q.answer}


def assert_same(fast: dict, slow: dict) -> None:
    assert fast["prediction"] == slow["prediction"]
    for letter, p in slow["probabilities"].items():
        assert abs(fast["probabilities"][letter] - p) <= TOLERANCE, (letter, fast["probabilities"], slow["probabilities"])
    assert abs(fast["vocabulary_share"] - slow["vocabulary_share"]) <= TOLERANCE
    assert fast["prompt"] == slow["prompt"] and fast["token_counts"] == slow["token_counts"]
    assert [t["token"] for t in fast["top_next_tokens"]] == [t["token"] for t in slow["top_next_tokens"]]


def test_loglikelihood_answers_as_the_harness_does_on_both_paths(loaded_model, reference, mmlu_data):
    """The narrow interface itself: (context, continuation) in; out, the continuation's summed
    log-probability and whether greedy decoding would write it (lm-evaluation-harness's pair), the
    same on the fast path (a cached shared prefix, packed rows) as on the reference path."""
    q = mmlu_data.question("astronomy", "test", 0)
    prepared = prepare(reference, request(mmlu_data, q, 5))
    context, shared = prepared.text, prepared.shared
    # One token: its text is that token again (a longer text may re-tokenise otherwise, " A\n\n" for one).
    (written,) = reference.generate_until([Generation(context, max_gen_toks=1)])
    assert len(written.tokens) == 1 and written.stopped == "length"
    continuations = [written.text, " A", " B", " C", " D", " The answer is"]
    slow = reference.loglikelihood([Loglikelihood(context, c) for c in continuations])
    fast = Scorer(loaded_model).loglikelihood([Loglikelihood(context, c, shared) for c in continuations])
    for f, s in zip(fast, slow, strict=True):
        assert abs(f.logprob - s.logprob) <= 1e-4 and f.is_greedy == s.is_greedy
        assert len(f.token_logprobs) == len(s.token_logprobs) and f.context_tokens == s.context_tokens
        assert [t for t, _ in f.next_tokens] == [t for t, _ in s.next_tokens]
        assert s.logprob == pytest.approx(sum(s.token_logprobs)) and s.logprob < 0
    assert len(slow[0].token_logprobs) == len(written.tokens) and slow[0].is_greedy  # what greedy decoding wrote
    likeliest = slow[1].next_tokens[0][0]
    assert [a.is_greedy for a in slow[1:5]] == [likeliest == c for c in continuations[1:5]]


# Two worked examples make a cached prefix with its seam as five do, in shorter prompts for the reference
# path (transformers' whole forward, logits everywhere: 31.8 → 23.6 s on the 2-core AMD machine);
# five-shot runs are held to the harness's own answers in tests/model/test_harness_equality.py.
@pytest.mark.parametrize("shots", [0, 2])
def test_prefix_reuse_and_batching_equal_the_full_prompt_path(loaded_model, reference, mmlu_data, shots):
    questions = sample(mmlu_data, 6, seed=12 + shots)
    # Two more questions of the first subject, so a batch shares a cached prefix.
    questions += mmlu_data.questions(questions[0].subject, "test")[:2]
    requests = [request(mmlu_data, q, shots) for q in questions]
    slow = [answer_question(reference, **r) for r in requests]
    one_by_one = Scorer(loaded_model, batch_rows=1)
    for r, expected in zip(requests, slow, strict=True):
        assert_same(answer_question(one_by_one, **r), expected)  # the prefix reused, one question per pass
    batched = answer_questions(Scorer(loaded_model, batch_rows=8), requests)
    for got, expected in zip(batched, slow, strict=True):
        assert_same(got, expected)


def test_a_batch_mixing_subjects_shots_methods_and_lengths_equals_each_alone(loaded_model, reference, mmlu_data):
    questions = sample(mmlu_data, 4, seed=7)
    # Options at up to three shots: the reference path runs each option's whole prompt (four rows of a
    # five-shot prompt cost it 14 s on the 2-core AMD machine); the letters keep their five-shot rows.
    requests = [request(mmlu_data, q, shots, method) for q, shots, method in
                zip(questions * 2, [0, 5, 2, 5, 2, 0, 1, 3], ["letter"] * 4 + ["option"] * 4, strict=True)]
    together = answer_questions(Scorer(loaded_model, batch_rows=16), requests)
    for r, got in zip(requests, together, strict=True):
        alone = answer_question(reference, **r)
        assert_same(got, alone)
        for a, b in zip(got["options"], alone["options"], strict=True):
            assert a["tokens"] == b["tokens"]
            assert abs(a["logprob"] - b["logprob"]) <= 1e-4  # a sum over up to dozens of tokens


def test_the_token_split_never_changes_tokenisation(loaded_model, mmlu_data):
    """The shared text's own tokens can differ from the whole prompt's at the seam (BPE merges
    across it); only the common token prefix is reused, and the prompt's tokens stay the same."""
    q = mmlu_data.question("astronomy", "test", 0)
    scorer = Scorer(loaded_model)
    result = answer_question(scorer, **request(mmlu_data, q, 5))
    (entry,) = scorer.prefixes.entries.values()
    whole = scorer.encode(result["prompt"]["text"])
    assert result["token_counts"]["prompt"] == len(whole)
    shared = scorer.encode("".join(p["text"] for p in result["prompt"]["parts"] if p["kind"] in ("header", "shot")))
    assert list(entry.token_ids) == shared


def test_ten_options_are_lettered_a_to_j_and_scored_the_same_way(loaded_model, reference):
    """The MMLU-Pro shape: ten options, through any prompt format object."""
    def prompt_parts(subject, question, choices, shots):
        text = "".join(f"{letter}. {c}\n" for letter, c in zip("ABCDEFGHIJ", choices, strict=True))
        return [SimpleNamespace(kind="header", text=f"Questions about {subject}.\n\n"),
                SimpleNamespace(kind="question", text=question + "\n" + text + "Answer:")]
    fmt = SimpleNamespace(prompt_parts=prompt_parts)
    choices = [str(n) for n in range(10, 20)]
    requests = [{"prompt_format": fmt, "subject": "arithmetic", "question": f"What is {a} + 10?", "choices": choices,
                 "shots": (), "method": "letter", "key": "ABCDEFGHIJ"[a]} for a in (3, 7)]
    fast = answer_questions(Scorer(loaded_model), requests)
    for r, got in zip(requests, fast, strict=True):
        assert list(got["probabilities"]) == list("ABCDEFGHIJ")
        assert_same(got, answer_question(reference, **r))


def test_micro_batched_server_answers_equal_one_by_one_answers(loaded_model, mmlu_data):
    questions = sample(mmlu_data, 3, seed=3) + list(mmlu_data.questions("virology", "test")[:5])
    requests = [request(mmlu_data, q, 5 if i % 2 else 0) for i, q in enumerate(questions)]
    alone = Scorer(loaded_model, batch_rows=1)
    expected = [answer_question(alone, **r) for r in requests]
    service = ScoringService(ModelSettings(), queue_size=16, timeout_s=300, micro_batch=8)
    service.scorer, service.state = Scorer(loaded_model, batch_rows=8), READY
    service._ready.set()
    sizes, real = [], service.scorer.loglikelihood

    def counted(batch, stop=None):
        sizes.append(len(batch))
        return real(batch, stop)
    service.scorer.loglikelihood = counted
    answers: dict = {}

    def ask(i: int, question: dict) -> None:  # as benchmarks/server/live.py asks the app's service
        prepared = prepare(service, question)
        answers[i] = read(prepared, service.loglikelihood(prepared.requests, client=i), service.model_facts())
    threads = [threading.Thread(target=ask, args=(i, r)) for i, r in enumerate(requests)]
    for t in threads:
        t.start()
    while len(service.waiting) < len(requests):
        threading.Event().wait(0.01)
    threading.Thread(target=service._serve, daemon=True).start()  # all eight are waiting when it starts
    for t in threads:
        t.join()
    assert sizes == [8 * 4]  # one pass for every waiting question's four continuations
    for i, want in enumerate(expected):
        assert_same(answers[i], want)


def test_two_workers_write_the_rows_one_worker_writes(loaded_model, mmlu_data, tmp_path):
    """evaluate --workers 2: two scorers on the one model, side by side, change no number."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the command runs them: one torch thread per worker
    try:
        runs = {}
        for workers in (1, 2):
            out = tmp_path / f"workers-{workers}.jsonl"
            summary = summarise(shared.evaluate(MMLUTask(mmlu_data), Scorer(loaded_model), ["astronomy", "virology"],
                                                shots=5, limit=3, out=out, progress=False, workers=workers))
            assert summary["questions"] == 6
            runs[workers] = {(r["subject"], r["index"]): r for r in map(json.loads, out.read_text().splitlines())}
    finally:
        torch.set_num_threads(threads)
    assert runs[1].keys() == runs[2].keys() and len(runs[1]) == 6
    first = Scorer(loaded_model)
    second = twin(first)  # what the second worker scores with
    assert second.decoder is first.decoder and second.loaded.model is first.loaded.model
    assert second.loaded.tokenizer is not first.loaded.tokenizer and second.prefixes is not first.prefixes
    for key, one in runs[1].items():
        two = runs[2][key]
        assert two["prediction"] == one["prediction"] and two["key"] == one["key"]
        assert two["probabilities"] == pytest.approx(one["probabilities"], abs=TOLERANCE)
