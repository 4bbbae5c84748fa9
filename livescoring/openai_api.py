"""The OpenAI API subset the model server speaks: requests read and checked, answers shaped.

The shapes are the ones lm-evaluation-harness 0.4.13's ``local-completions`` and
``local-chat-completions`` clients send and read (``lm_eval/models/openai_completions.py``,
``api_models.py``, ``utils.RemoteTokenizer``), which are vLLM's OpenAI-compatible server's:

* ``POST /v1/completions``: ``prompt`` as text, a list of texts, a list of token ids or a list of
  such lists; ``max_tokens`` (0 with ``echo``: the prompt's log-probabilities only), ``echo``,
  ``logprobs`` (the likeliest k at each place), vLLM's ``prompt_logprobs``, ``stop``,
  ``temperature`` (0: greedy, the only decoding here), ``stream``, ``seed`` (accepted; greedy
  needs none), ``model`` (null or the served name), vLLM's ``return_tokens_as_token_ids`` and
  ``logprob_token_ids`` (at each written token, the values of these token ids instead of the
  likeliest ``logprobs``: what a scorer of a few labels asks, which need not be among them);
* ``POST /v1/chat/completions``: ``messages`` through the model's chat template, the same
  generation fields;
* ``POST /tokenize`` (``prompt`` or chat ``messages``) and ``POST /detokenize``.

Nothing here touches the model or the network: :func:`completion_request` and friends turn a JSON
body into a checked request or raise :class:`ApiError` (the OpenAI error shape, with the HTTP
status and the field to fix); the ``*_answer`` functions build the JSON the client reads.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

MAX_LOGPROBS = 20  # as vLLM's default max_logprobs; prompt_reader.TOP_KEPT keeps as many per place
MAX_PROMPTS = 64  # prompts in one request
MAX_LOGPROB_TOKEN_IDS = 256  # logprob_token_ids: a label vocabulary's size, not the model's
MAX_STOPS = 16
MAX_STOP_CHARS = 256
MAX_MESSAGES = 64
DEFAULT_MAX_TOKENS = 16  # OpenAI's default for completions


class ApiError(Exception):
    """A request the server will not run: ``status``, a message saying what to fix, the field."""

    def __init__(self, status: int, message: str, param: str | None = None, kind: str = "invalid_request_error",
                 retry_after: int | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.kind, self.retry_after = status, message, param, kind, retry_after

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.status}}


@dataclass(frozen=True)
class Sampling:
    """What a generation asks for: at most ``max_tokens`` greedy tokens, cut at ``stop``."""

    max_tokens: int
    stop: tuple[str, ...]
    logprobs: int | None  # alternatives per generated (and, with echo, prompt) token; None: no logprobs object
    stream: bool
    include_usage: bool = False  # stream_options: a last chunk with the usage
    continuous_usage: bool = False  # vLLM's continuous_usage_stats: the usage in every chunk


@dataclass(frozen=True)
class CompletionRequest:
    prompts: tuple  # each a str or a tuple of token ids
    echo: bool
    prompt_logprobs: int | None
    sampling: Sampling
    token_ids: bool = False  # vLLM's return_tokens_as_token_ids
    logprob_token_ids: tuple[int, ...] = ()  # vLLM's: at written tokens, these ids' values, not the likeliest k


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[dict, ...]
    sampling: Sampling


def _whole(body: dict, name: str, low: int, high: int, default: int | None) -> int | None:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, f"'{name}' must be a whole number from {low} to {high}", name)
    if not low <= value <= high:
        raise ApiError(400, f"'{name}' must be from {low} to {high}; got {value}", name)
    return value


def _flag(body: dict, name: str) -> bool:
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ApiError(400, f"'{name}' must be true or false", name)
    return value


def check_model(body: dict, served: str) -> None:
    """``model`` may be absent, null or the served name (as vLLM, another name is a 404)."""
    model = body.get("model")
    if model is not None and model != served:
        raise ApiError(404, f"The model '{model}' does not exist; this server serves '{served}'", "model",
                       "NotFoundError")


def _sampling(body: dict, max_tokens_high: int, default_max_tokens: int, low: int = 1) -> Sampling:
    temperature = body.get("temperature", 0)
    if temperature is None:
        temperature = 0
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise ApiError(400, "'temperature' must be a number", "temperature")
    if temperature != 0:
        raise ApiError(400, "this server decodes greedily only: send 'temperature': 0", "temperature")
    n = body.get("n", 1)
    if n not in (1, None):
        raise ApiError(400, "'n' must be 1: greedy decoding writes one answer per prompt", "n")
    stop = body.get("stop")
    stops = () if stop is None else (stop,) if isinstance(stop, str) else stop
    if not isinstance(stops, list | tuple) or not all(isinstance(s, str) for s in stops):
        raise ApiError(400, "'stop' must be a string or a list of strings", "stop")
    if len(stops) > MAX_STOPS or any(len(s) > MAX_STOP_CHARS for s in stops):
        raise ApiError(400, f"'stop' takes at most {MAX_STOPS} strings of at most {MAX_STOP_CHARS} characters", "stop")
    logprobs = body.get("logprobs")
    if logprobs is True:  # the chat API's form: a flag, with top_logprobs the count
        logprobs = _whole(body, "top_logprobs", 0, MAX_LOGPROBS, 0)
    elif logprobs is False:
        logprobs = None
    else:
        logprobs = _whole(body, "logprobs", 0, MAX_LOGPROBS, None)
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise ApiError(400, "'stream_options' must be an object", "stream_options")
    return Sampling(_whole(body, "max_tokens", low, max_tokens_high, default_max_tokens),
                    tuple(s for s in stops if s), logprobs, _flag(body, "stream"),
                    _flag(options, "include_usage"), _flag(options, "continuous_usage_stats"))


def _prompts(prompt, vocabulary: int) -> tuple:
    if isinstance(prompt, str):
        prompts = [prompt]
    elif isinstance(prompt, list) and prompt and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        prompts = [prompt]
    elif isinstance(prompt, list):
        prompts = prompt
    else:
        raise ApiError(400, "'prompt' must be a string, a list of strings, a list of token ids or a list of such lists",
                       "prompt")
    if not prompts:
        raise ApiError(400, "'prompt' is empty", "prompt")
    if len(prompts) > MAX_PROMPTS:
        raise ApiError(413, f"at most {MAX_PROMPTS} prompts in one request; got {len(prompts)}", "prompt")
    checked = []
    for one in prompts:
        if isinstance(one, str):
            if not one:
                raise ApiError(400, "a prompt is empty", "prompt")
            checked.append(one)
        elif isinstance(one, list) and one and all(isinstance(t, int) and not isinstance(t, bool) for t in one):
            if not all(0 <= t < vocabulary for t in one):
                raise ApiError(400, f"token ids must be from 0 to {vocabulary - 1}", "prompt")
            checked.append(tuple(one))
        else:
            raise ApiError(400, "each prompt must be a non-empty string or a non-empty list of token ids", "prompt")
    return tuple(checked)


def completion_request(body: dict, vocabulary: int, max_new_tokens: int) -> CompletionRequest:
    echo = _flag(body, "echo")
    sampling = _sampling(body, max_new_tokens, DEFAULT_MAX_TOKENS, low=0 if echo else 1)
    if "prompt" not in body:
        raise ApiError(400, "'prompt' is required", "prompt")
    prompt_logprobs = _whole(body, "prompt_logprobs", 0, MAX_LOGPROBS, None)
    if sampling.stream and (echo or prompt_logprobs is not None):
        raise ApiError(400, "'stream' cannot be combined with 'echo' or 'prompt_logprobs' here", "stream")
    ids = body.get("logprob_token_ids") or []
    if (not isinstance(ids, list) or len(ids) > MAX_LOGPROB_TOKEN_IDS
            or not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < vocabulary for t in ids)):
        raise ApiError(400, f"'logprob_token_ids' must be a list of at most {MAX_LOGPROB_TOKEN_IDS} token ids from 0 "
                            f"to {vocabulary - 1}", "logprob_token_ids")
    if ids and not sampling.max_tokens:
        raise ApiError(400, "'logprob_token_ids' gives values at written tokens: ask for at least one (max_tokens)",
                       "logprob_token_ids")
    return CompletionRequest(_prompts(body["prompt"], vocabulary), echo, prompt_logprobs, sampling,
                             _flag(body, "return_tokens_as_token_ids"), tuple(dict.fromkeys(ids)))


def chat_request(body: dict, max_new_tokens: int) -> ChatRequest:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or len(messages) > MAX_MESSAGES:
        raise ApiError(400, f"'messages' must be a list of 1 to {MAX_MESSAGES} messages", "messages")
    for message in messages:
        if not (isinstance(message, dict) and isinstance(message.get("role"), str)
                and isinstance(message.get("content"), str)):
            raise ApiError(400, "each message needs a 'role' and a 'content', both strings", "messages")
    sampling = _sampling({**body, "max_tokens": body.get("max_completion_tokens", body.get("max_tokens"))},
                         max_new_tokens, max_new_tokens)
    return ChatRequest(tuple({"role": m["role"], "content": m["content"]} for m in messages), sampling)


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def logprobs_block(strings: list[str], chosen: list[float | None], top: list[dict | None]) -> dict:
    """The completions API's ``logprobs`` object over some tokens (text offsets from the first)."""
    offsets, at = [], 0
    for text in strings:
        offsets.append(at)
        at += len(text)
    return {"tokens": strings, "token_logprobs": chosen, "top_logprobs": top, "text_offset": offsets}


def usage(prompt_tokens: int, completion_tokens: int, cached_tokens: int | None = None) -> dict:
    """OpenAI's usage object; ``cached_tokens`` (prompt_tokens_details) where the prefix cache is known."""
    counts = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
              "total_tokens": prompt_tokens + completion_tokens}
    if cached_tokens is not None:
        counts["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return counts


def completion_answer(model: str, choices: list[dict], prompt_tokens: int, completion_tokens: int) -> dict:
    return {"id": _new_id("cmpl"), "object": "text_completion", "created": int(time.time()), "model": model,
            "choices": choices, "usage": usage(prompt_tokens, completion_tokens)}


def completion_chunk(model: str, chunk_id: str, index: int, text: str, finish_reason: str | None,
                     stop_reason=None) -> dict:
    choice = {"index": index, "text": text, "logprobs": None, "finish_reason": finish_reason}
    if finish_reason is not None:
        choice["stop_reason"] = stop_reason
    return {"id": chunk_id, "object": "text_completion", "created": int(time.time()), "model": model,
            "choices": [choice]}


def chat_answer(model: str, text: str, finish_reason: str, stop_reason, prompt_tokens: int,
                completion_tokens: int) -> dict:
    return {"id": _new_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                         "finish_reason": finish_reason, "stop_reason": stop_reason}],
            "usage": usage(prompt_tokens, completion_tokens)}


def chat_chunk(model: str, chunk_id: str, delta: dict, finish_reason: str | None, stop_reason=None) -> dict:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    if finish_reason is not None:
        choice["stop_reason"] = stop_reason
    return {"id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [choice]}


def new_stream_id(chat: bool) -> str:
    return _new_id("chatcmpl" if chat else "cmpl")


def tokenize_request(body: dict) -> tuple[str | None, tuple[dict, ...] | None, bool, bool]:
    """(prompt, messages, add_special_tokens, add_generation_prompt): vLLM's /tokenize takes one of the two."""
    if "messages" in body:
        chat = chat_request({"messages": body["messages"]}, 1)
        return None, chat.messages, _flag(body, "add_special_tokens"), body.get("add_generation_prompt", True) is True
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise ApiError(400, "'prompt' must be a string (or send chat 'messages')", "prompt")
    special = body.get("add_special_tokens", True)
    if not isinstance(special, bool):
        raise ApiError(400, "'add_special_tokens' must be true or false", "add_special_tokens")
    return prompt, None, special, False


def detokenize_request(body: dict, vocabulary: int) -> list[int]:
    tokens = body.get("tokens")
    if not isinstance(tokens, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        raise ApiError(400, "'tokens' must be a list of token ids", "tokens")
    if not all(0 <= t < vocabulary for t in tokens):
        raise ApiError(400, f"token ids must be from 0 to {vocabulary - 1}", "tokens")
    return tokens


def sse(payload) -> bytes:
    return b"data: " + (payload if isinstance(payload, bytes) else json.dumps(payload).encode()) + b"\n\n"


class StreamChunks:
    """A stream's chunks, completions' or chat's, with the usage where it is asked for, as
    server-sent events; fed the model thread's events for one request (server.py)."""

    def __init__(self, name: str, prompts: list[list[int]], sampling: Sampling, chat: bool):
        self.name, self.prompts, self.sampling, self.chat = name, prompts, sampling, chat
        self.id = new_stream_id(chat)
        self.index, self.written, self.cached, self.all_written = 0, 0, None, 0

    def chunk(self, text: str | None, finish=None, stop_reason=None, delta=None) -> bytes:
        if self.chat:
            payload = chat_chunk(self.name, self.id, delta if delta is not None else
                                     ({} if text is None else {"content": text}), finish, stop_reason)
        else:
            payload = completion_chunk(self.name, self.id, self.index, text or "", finish, stop_reason)
        if self.sampling.continuous_usage:
            payload["usage"] = usage(len(self.prompts[self.index]), self.written, self.cached)
        return sse(payload)

    def on_event(self, event: dict) -> bytes | None:
        """The chunk for a job's event: the cache's share of the prompt (a chunk only with continuous
        usage), a prompt's finish, or a piece of text."""
        if "cached_tokens" in event:
            self.cached = event["cached_tokens"]
            return self.chunk(None) if self.sampling.continuous_usage else None
        self.written = event["tokens"]
        if "finish" not in event:
            return self.chunk(event["text"])
        piece = self.chunk(None, event["finish"], event["stop_reason"])
        self.all_written += event["tokens"]
        self.index, self.written, self.cached = event["index"] + 1, 0, None
        return piece

    def usage_chunk(self) -> bytes:
        return sse({"id": self.id, "object": "chat.completion.chunk" if self.chat else "text_completion",
                     "created": int(time.time()), "model": self.name, "choices": [],
                     "usage": usage(sum(map(len, self.prompts)), self.all_written)})
