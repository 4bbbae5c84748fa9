"""The model server with the real model (`python -m livescoring serve`, one per run: the `model_server` fixture).

* Through :class:`livescoring.client.ModelClient`, a question's letter, option and generative answers
  equal the in-process reference path's (transformers' whole forward): every probability within
  1e-5, the same prediction, the same generated text and tokens.
* The prefix cache needs no hint and changes no number: the same request gives the same numbers,
  bit for bit, alone, after other requests, and while others run beside it.
* The site's question from the distribution after its prompt (a one-token generation's likeliest 20
  by token id, and the other letters by their ids) gives the echo's answers bit for bit.
* The wire shapes lm-evaluation-harness reads: echo's per-token values with the first null, the
  greedy test by exact comparison with the top entry, vLLM's prompt_logprobs, streamed events
  ending in [DONE], chat through the model's template, the tokenizer routes.
"""
from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from benchmarks.mmlu import prompt
from benchmarks.server.multiple_choice import answer_question
from livescoring.client import BackendUnsuitable, ModelClient
from livescoring.scorer import Generation, Loglikelihood, Scorer

pytestmark = [pytest.mark.model, pytest.mark.slow]  # slow: through the model server
TOLERANCE = 1e-5


def post(url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


def question(mmlu_data, subject: str, index: int, shots: int, method: str) -> dict:
    q = mmlu_data.question(subject, "test", index)
    return {"prompt_format": prompt, "subject": subject, "question": q.question, "choices": q.choices,
            "shots": mmlu_data.questions(subject, "dev")[:shots], "method": method, "key": q.answer,
            **({"until": ("\n\n",), "max_new_tokens": 8} if method == "generative" else {})}


# Two worked examples put a block seam inside the cached prefix as five do, in prompts short enough for
# the reference path (transformers' whole forward); five shots are held to lm_eval's own answers in
# tests/model/test_harness_client.py.
def test_answers_through_the_server_equal_the_reference_path(model_server, loaded_model, mmlu_data):
    client, reference = ModelClient(model_server), Scorer(loaded_model, reuse_prefix=False)
    for subject, index, shots in (("astronomy", 0, 0), ("astronomy", 1, 2), ("college_physics", 3, 2)):
        for method in ("letter", "option", "generative"):
            got = answer_question(client, **question(mmlu_data, subject, index, shots, method))
            expected = answer_question(reference, **question(mmlu_data, subject, index, shots, method))
            assert got["prompt"] == expected["prompt"]
            if method == "generative":
                assert (got["generated"], got["stopped"], got["tokens"]) == \
                    (expected["generated"], expected["stopped"], expected["tokens"])
                continue
            assert got["prediction"] == expected["prediction"] and got["token_counts"] == expected["token_counts"]
            for letter, p in expected["probabilities"].items():
                assert abs(got["probabilities"][letter] - p) <= TOLERANCE, (subject, index, method, letter)
            assert [t["token"] for t in got["top_next_tokens"]] == [t["token"] for t in expected["top_next_tokens"]]


def test_the_same_request_gives_the_same_numbers_whatever_came_before_or_runs_beside(model_server, mmlu_data):
    client = ModelClient(model_server)
    # Three worked examples: 345 tokens, five whole blocks and a tail, longer than every other prompt
    # below (five examples, 489 tokens, read two blocks more in each fresh read for nothing they test).
    tokens = client.encode(question_text(mmlu_data, "high_school_biology", 5, 3))
    assert len(tokens) > 5 * 64 > 209
    body = {"prompt": [tokens], "echo": True, "logprobs": 3, "max_tokens": 1, "temperature": 0}
    first = post(model_server, "/v1/completions", body)["choices"][0]["logprobs"]
    # Other prompts that share its first blocks, or part of one, or none, then the same request again.
    for other in (tokens[:100], tokens[:70] + tokens[5:40], tokens[:130] + [11, 12, 13], tokens[200:]):
        post(model_server, "/v1/completions", {**body, "prompt": [other]})
    again = post(model_server, "/v1/completions", body)["choices"][0]["logprobs"]
    assert again == first
    # Once more straight after: the buffer its blocks were joined in (PromptReader.joined) serves again.
    assert post(model_server, "/v1/completions", body)["choices"][0]["logprobs"] == first
    # Beside others: four identical requests and four others at once.
    answers, threads = [], []
    for i in range(8):
        prompt_tokens = tokens if i % 2 == 0 else tokens[: 90 + 17 * i]
        threads.append(threading.Thread(target=lambda p=prompt_tokens: answers.append(
            (p is tokens, post(model_server, "/v1/completions", {**body, "prompt": [p]})))))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    same = [a["choices"][0]["logprobs"] for mine, a in answers if mine]
    assert len(same) == 4 and all(s == first for s in same)


def test_an_echo_that_writes_nothing_reads_a_questions_letters_once_and_alike(model_server, mmlu_data):
    """max_tokens 0 (what the site's client sends): the prompt's values are read from the prompt
    without its last token, so a question's four letters share one read; each letter's values are
    the same whether it is sent with the others or alone, and lm_eval's shape (max_tokens 1) agrees
    within float rounding."""
    client = ModelClient(model_server)
    context = client.encode(question_text(mmlu_data, "college_biology", 2, 3))
    letters = [client.encode_pair(client._decoded(context), f" {letter}")[1] for letter in "ABCD"]
    prompts = [context + letter for letter in letters]
    body = {"echo": True, "logprobs": 2, "max_tokens": 0, "temperature": 0}
    together = post(model_server, "/v1/completions", {**body, "prompt": prompts})["choices"]
    for prompt_tokens, choice in zip(prompts, together, strict=True):
        (alone,) = post(model_server, "/v1/completions", {**body, "prompt": [prompt_tokens]})["choices"]
        assert alone["logprobs"] == choice["logprobs"] and len(alone["logprobs"]["token_logprobs"]) == len(prompt_tokens)
        (written,) = post(model_server, "/v1/completions", {**body, "max_tokens": 1, "prompt": [prompt_tokens]})["choices"]
        assert written["logprobs"]["token_logprobs"][-2] == pytest.approx(choice["logprobs"]["token_logprobs"][-1],
                                                                          abs=1e-4)


def question_text(mmlu_data, subject: str, index: int, shots: int) -> str:
    q = question(mmlu_data, subject, index, shots, "letter")
    return "".join(p.text for p in prompt.prompt_parts(subject, q["question"], q["choices"], q["shots"]))


def test_echo_has_the_shapes_the_harness_reads(model_server, loaded_model):
    client = ModelClient(model_server)
    context, continuation = client.encode_pair("The capital of France is", " Paris")
    tokens = context + continuation
    answer = post(model_server, "/v1/completions", {"prompt": [tokens], "echo": True, "logprobs": 1, "max_tokens": 1,
                                                    "temperature": 0, "seed": 1234, "model": None,
                                                    "prompt_logprobs": 2})
    (choice,) = answer["choices"]
    logprobs = choice["logprobs"]
    assert len(logprobs["token_logprobs"]) == len(tokens) + 1 and logprobs["token_logprobs"][0] is None
    assert logprobs["top_logprobs"][0] is None and len(logprobs["text_offset"]) == len(tokens) + 1
    assert "".join(logprobs["tokens"][:len(tokens)]) == "The capital of France is Paris"
    # The harness's own reading (lm_eval/models/openai_completions.py parse_logprobs).
    ctxlen = len(context)
    mine = logprobs["token_logprobs"][ctxlen:-1]
    greedy = all(v == max(top.values()) for v, top in zip(mine, logprobs["top_logprobs"][ctxlen:-1], strict=True))
    (expected,) = Scorer(loaded_model, reuse_prefix=False).loglikelihood(
        [Loglikelihood("The capital of France is", " Paris")])
    assert abs(sum(mine) - expected.logprob) <= TOLERANCE and greedy == expected.is_greedy
    # vLLM's prompt_logprobs: each prompt token after the first, itself and the likeliest two, with ranks.
    prompt_logprobs = choice["prompt_logprobs"]
    assert prompt_logprobs[0] is None and len(prompt_logprobs) == len(tokens)
    last = prompt_logprobs[-1][str(tokens[-1])]
    assert last["logprob"] == pytest.approx(mine[-1]) and last["rank"] >= 1 and last["decoded_token"] == " Paris"


def test_generation_streams_and_stops(model_server):
    body = {"prompt": "Count: one, two, three,", "max_tokens": 12, "temperature": 0, "stop": [" six"], "stream": True}
    request = urllib.request.Request(model_server + "/v1/completions", data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=120) as answer:
        assert answer.headers["Content-Type"] == "text/event-stream"
        events = [line[6:] for line in answer.read().decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    streamed = "".join(c["choices"][0]["text"] for c in chunks)
    whole = post(model_server, "/v1/completions", {**body, "stream": False})["choices"][0]
    assert streamed == whole["text"] and chunks[-1]["choices"][0]["finish_reason"] == whole["finish_reason"]
    assert " six" not in streamed


def test_chat_uses_the_model_template(model_server, loaded_model):
    messages = [{"role": "user", "content": "What is 2 + 2?"}]
    answer = post(model_server, "/v1/chat/completions", {"messages": messages, "max_tokens": 10, "temperature": 0})
    text = loaded_model.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    (expected,) = Scorer(loaded_model).generate_until([Generation(text, max_gen_toks=10)])
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": expected.text}
    tokens = post(model_server, "/tokenize", {"messages": messages, "add_generation_prompt": True})["tokens"]
    assert tokens == loaded_model.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert post(model_server, "/detokenize", {"tokens": tokens})["prompt"] == text


def test_letters_from_the_distribution_after_the_prompt_are_the_echos_bit_for_bit(model_server, mmlu_data):
    """The site's client (``after_context``): after its first batch (an echo, which checks the server),
    one-token continuations are read from one generated token's likeliest 20 after the context, and
    those not among them from a second request naming their ids (vLLM's logprob_token_ids), with
    the echo's numbers exactly; from a server that ignores that field, the echo answers."""
    client, sent, dropped = ModelClient(model_server), [], []

    def recorded(path, body=None, headers=None):
        if path == "/v1/completions":
            sent.append(body)
            body = {k: v for k, v in body.items() if k not in dropped}
        return ModelClient._call(client, path, body, headers)

    client._call = recorded
    context = question_text(mmlu_data, "college_biology", 2, 1)
    letters = [Loglikelihood(context, f" {letter}") for letter in "ABCD"]
    echoed = client.loglikelihood(letters, after_context=True)
    assert sent[-1]["echo"] is True
    fast = client.loglikelihood(letters, after_context=True)
    assert sent[-1]["max_tokens"] == 1 and "echo" not in sent[-1] and len(sent[-1]["prompt"]) == 1
    assert fast == echoed == client.loglikelihood(letters)
    # A token the model would not write there (not among its likeliest 20): asked for by its id.
    unlikely = [Loglikelihood(context, " Paris")]
    named = client.loglikelihood(unlikely, after_context=True)
    assert sent[-1]["logprob_token_ids"] == list(client.encode_pair(context, " Paris")[1])
    assert named == client.loglikelihood(unlikely)
    dropped.append("logprob_token_ids")  # an older vLLM ignores the field
    assert client.loglikelihood(unlikely, after_context=True) == named and sent[-1]["echo"] is True


def test_a_server_without_prompt_logprobs_is_refused(model_server):
    """A client that gets no per-prompt-token values (llama.cpp's server returns them only for the
    tokens it writes) says so instead of scoring: here, a server that ignores echo."""
    client = ModelClient(model_server)

    def without_echo(path, body=None, headers=None):
        return ModelClient._call(client, path, body and {**body, "echo": False}, headers)

    client._call = without_echo
    with pytest.raises(BackendUnsuitable, match="prompt log-probabilities"):
        client.loglikelihood([Loglikelihood("A", " B")])


THREADS_CHECK = """
import sys
from livescoring.core_share import products_reproducible_across_threads
assert products_reproducible_across_threads()
import torch
from engine.config import default_config
from livescoring.model import ModelSettings, load
from livescoring.prompt_reader import PromptReader

# The converted copy the suite's other loads read (a conversion of the GGUF costs many CPU-seconds).
loaded = load(ModelSettings(threads=2, cache_dir=default_config()["MODEL_CACHE_DIR"]), module=False)
tokens = loaded.tokenizer(sys.argv[1])["input_ids"]
values = []
for threads in (2, 1, 2):
    torch.set_num_threads(threads)
    steps = PromptReader(loaded, 0).steps(tokens, values=True)
    try:
        while True:
            next(steps)
    except StopIteration as done:
        values.append((done.value.chosen, done.value.next_row.tolist()))
print(values[0] == values[1] == values[2])
"""


def test_a_pass_gives_the_same_numbers_on_one_thread_and_on_two(mmlu_data, tmp_path):
    """The model server runs a pass on the cores the machine leaves it (core_share.py): with MKL's
    reproducible products its numbers do not depend on how many (by default they differ by up to 3e-5)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    q = mmlu_data.question("astronomy", "test", 3)
    script = tmp_path / "threads.py"
    script.write_text(THREADS_CHECK)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("MKL_CBWR", None)
    done = subprocess.run([sys.executable, str(script), prompt.build_prompt("astronomy", q.question, q.choices)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True"
