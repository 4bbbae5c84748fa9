"""ModelClient refuses a server that cannot score, naming what is missing (livescoring/client.py).

The answers are llama-cpp-python 0.3.36's server's, recorded on the project's GGUF (docs/live-scoring.md,
"Another server"): it has no /tokenize, and its echo values are one short and each one place late. No
model and no network: the client's HTTP call is replaced by the recorded answers.
"""
from __future__ import annotations

import pytest

from livescoring.client import BackendUnsuitable, ModelClient, ModelServerError
from livescoring.scorer import Loglikelihood

TOKENS = {"The capital of France is": [504, 3575, 282, 4649, 314],
          "The capital of France is Paris": [504, 3575, 282, 4649, 314, 7042]}
# POST /v1/completions {"prompt": "The capital of France is Paris", "echo": true, "logprobs": 1,
# "max_tokens": 1, "temperature": 0}, as llama-cpp-python's server answered it (it takes no token ids).
LLAMA_CPP_PYTHON_ECHO = {"choices": [{"text": "The capital of France is Paris.", "index": 0, "finish_reason": "length",
                                      "logprobs": {
    "text_offset": [0, 3, 11, 14, 21, 24],
    "token_logprobs": [None, -9.599955558776855, -10.462464332580566, -11.225584030151367, -11.794837951660156,
                       -8.452631950378418],
    "tokens": ["The", " capital", " of", " France", " is", " Paris"],
    "top_logprobs": [None, {" of": -0.4120810329914093, " capital": -9.599955558776855},
                     {" the": -1.987992525100708, " of": -10.462464332580566},
                     {" is": -0.43200764060020447, " France": -11.225584030151367},
                     {" Paris": -0.264419287443161, " is": -11.794837951660156},
                     {".": -0.3762276768684387, " Paris": -8.452631950378418}]}}]}


def client_answering(answer) -> ModelClient:
    client = ModelClient("http://127.0.0.1:9")
    client._call = lambda path, body=None, headers=None: answer(path, body)
    return client


def test_a_server_without_tokenize_is_refused_by_name():
    def answer(path, body):
        raise ModelServerError("the model server answered 404: Not Found", 404)

    with pytest.raises(BackendUnsuitable, match=r"no POST /tokenize \(it answered 404\)"):
        client_answering(answer).loglikelihood([Loglikelihood("The capital of France is", " Paris")])


def test_a_busy_tokenize_is_not_called_unsuitable():
    def answer(path, body):
        raise ModelServerError("the model server answered 503: The model is loading.", 503, 5)

    with pytest.raises(ModelServerError) as raised:
        client_answering(answer).encode("Paris")
    assert not isinstance(raised.value, BackendUnsuitable) and raised.value.retry_after == 5


def llama_cpp_python_echo(max_tokens: int) -> dict:
    """Its echo answer as it gives it: asked for 1 written token, the recorded one (six values, none for
    the written token); asked for 0, it writes until it stops (129 tokens there), a value for each."""
    if max_tokens == 1:
        return LLAMA_CPP_PYTHON_ECHO
    choice = LLAMA_CPP_PYTHON_ECHO["choices"][0]
    logprobs = {key: value + [value[-1]] * 129 for key, value in choice["logprobs"].items()}
    return {"choices": [{**choice, "finish_reason": "stop", "logprobs": logprobs}]}


def tokenizing(echo):
    """A server with a /tokenize and a context length (llama-cpp-python has neither) and the given echo."""
    def answer(path, body):
        if path == "/tokenize":
            return {"tokens": TOKENS[body["prompt"]]}
        if path == "/v1/models":
            return {"data": [{"id": "smollm2", "max_model_len": 8192}]}
        return echo(body)
    return answer


def test_llama_cpp_pythons_echo_is_refused_even_with_a_tokenizer():
    """Had it a /tokenize and a context length, its echo values would still be refused: asked to write
    nothing (the client's first ask), it writes on, 135 values for 6 prompt tokens."""
    with pytest.raises(BackendUnsuitable, match=r"should give 6 values for 6 prompt tokens, the first null; got 135, "
                                                r"129 more: it wrote tokens it was not asked for"):
        client_answering(tokenizing(lambda body: llama_cpp_python_echo(body["max_tokens"]))).loglikelihood(
            [Loglikelihood("The capital of France is", " Paris")])


def test_values_one_place_late_are_refused_by_their_count():
    """A server that refuses max_tokens 0 (the client then asks for 1) and answers as llama-cpp-python
    does for 1: six values for six prompt tokens and one written, each one place late."""
    def echo(body):
        if body["max_tokens"] == 0:
            raise ModelServerError("the model server answered 400: max_tokens must be at least 1", 400)
        return llama_cpp_python_echo(1)

    with pytest.raises(BackendUnsuitable, match=r"should give 7 values for 6 prompt tokens, the first null; got 6, one "
                                                r"short: no value for the token it wrote"):
        client_answering(tokenizing(echo)).loglikelihood([Loglikelihood("The capital of France is", " Paris")])
