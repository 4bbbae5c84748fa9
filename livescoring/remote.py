"""The model server, as the scoring service's model: :class:`RemoteModel`.

``ScoringService`` (worker.py) keeps the readers' side of live scoring: its bounded queue, each
client's share, pre-emption, cancellation, the server's stop. Its worker thread hands the work to a
model: in the test suite and the batch command a :class:`~livescoring.scorer.Scorer` in this process;
in the site (app.py) this object, which asks a model server over HTTP (``MODEL_SERVER_URL``: the
project's own ``python -m livescoring serve``, a load balancer over several, or any server that gives
prompt log-probabilities as vLLM does). It offers what the worker and the benchmarks read of a
Scorer (``loglikelihood``, ``token_count``, ``encode``, ``context_length``, ``model_facts``, and
``loaded`` with the model's facts and a tokenizer that only renders the chat template), plus
:meth:`generation_steps`, a generation's events read from the server's stream. Standard library and
jinja2 only: the web process imports no torch.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from types import SimpleNamespace

from .client import ModelClient
from .scorer import Generation, Loglikelihood, LoglikelihoodAnswer, model_facts


class ChatTemplate:
    """The model's chat template, rendered here as transformers renders it (a sandboxed jinja2
    environment with trim_blocks and lstrip_blocks): what the benchmarks' chat prompts need of a
    tokenizer (``chat_template``, ``apply_chat_template(turns, tokenize=False, ...)``)."""

    def __init__(self, info: dict):
        self.chat_template = info.get("chat_template")
        self.special = {name: info.get(name) for name in ("bos_token", "eos_token", "pad_token", "unk_token")}
        self._template = None

    def apply_chat_template(self, turns: list[dict], tokenize: bool = False, add_generation_prompt: bool = True,
                            **extra) -> str:
        if tokenize:
            raise ValueError("the model server tokenizes; render to text here")
        if self._template is None:
            from jinja2.exceptions import TemplateError
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            def raise_exception(message):
                raise TemplateError(message)

            environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
            environment.globals["raise_exception"] = raise_exception
            self._template = environment.from_string(self.chat_template or "")
        return self._template.render(messages=turns, add_generation_prompt=add_generation_prompt,
                                     **self.special, **extra)


def prefix_key(shared: str) -> str:
    """What a load balancer hashes on (client.PREFIX_KEY_HEADER): requests that share a leading text
    meet the same server, whose cache holds it."""
    return hashlib.sha256(shared.encode()).hexdigest()[:16] if shared else ""


class RemoteModel:
    reuse_prefix = True  # the server's cache needs no hint: a generation's shared text is reused there

    def __init__(self, client: ModelClient):
        self.client = client
        facts = client.model_facts()
        self.loaded = SimpleNamespace(
            name=facts["name"], device=facts["device"] or "model server", dtype=facts["dtype"] or "unknown",
            threads=facts["threads"], context_length=facts["context_length"], load_seconds=0.0, from_cache=True,
            tokenizer=ChatTemplate(client.tokenizer_info()), server=client.base_url)

    @property
    def context_length(self) -> int:
        return self.loaded.context_length

    def model_facts(self) -> dict:
        return model_facts(self.loaded)

    def encode(self, text: str) -> list[int]:
        return self.client.encode(text)

    def token_count(self, context: str, continuations: Sequence[str] = ()) -> int:
        return self.client.token_count(context, continuations)

    def loglikelihood(self, requests: Sequence[Loglikelihood], stop=None) -> list[LoglikelihoodAnswer]:
        """One request to the server for the batch (``stop`` is not asked: the server stops a request
        whose client closed it, and a batch is one request); a question's letters from the
        distribution after its prompt, where the server gives it (client.py, ``after_context``)."""
        return self.client.loglikelihood(requests, prefix_key=prefix_key(requests[0].shared) if requests else "",
                                         after_context=True)

    def read_ahead(self, text: str, shared: str = "") -> None:
        """Have the server read ``text`` into its prefix cache (a generation of one token, unread):
        a prompt the reader will likely ask for next. Blocks until the server is done; a refusal or
        a failure raises, for the caller to ignore."""
        chunks = self.client.stream_completion(self.client.encode(text), 1, (), prefix_key(shared))
        try:
            for _ in chunks:
                pass
        finally:
            chunks.close()

    def generation_steps(self, request: Generation) -> Iterator[dict | None]:
        """A generation's events as generate.greedy_steps gives them, from the server's stream: first
        {"reading": {"prompt_tokens", "cached_tokens"}}, then {"text": piece, "tokens": written so
        far}, then {"done": True, "reason", "tokens", "prompt_tokens", "ms"}. Closing it closes the
        stream, and the server stops writing."""
        started = time.perf_counter()
        ids = self.client.encode(request.context)
        chunks = self.client.stream_completion(ids, request.max_gen_toks, request.until, prefix_key(request.shared))
        reason, written, told = "length", 0, False
        try:
            for chunk in chunks:
                usage = chunk.get("usage") or {}
                written = usage.get("completion_tokens", written)
                choice = (chunk.get("choices") or [{}])[0]
                if not told:
                    told = True
                    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
                    yield {"reading": {"prompt_tokens": len(ids), "cached_tokens": cached}}
                if choice.get("text"):
                    yield {"text": choice["text"], "tokens": written}
                if choice.get("finish_reason"):
                    reason = ("length" if choice["finish_reason"] == "length"
                              else "stop" if choice.get("stop_reason") else "end of text")
                    if reason == "end of text":  # the server counts the end-of-text token; the text has it not
                        written = max(0, written - 1)
                    break
        finally:
            chunks.close()
        if not told:
            yield {"reading": {"prompt_tokens": len(ids), "cached_tokens": 0}}
        yield {"done": True, "reason": reason, "tokens": written, "prompt_tokens": len(ids),
               "ms": round((time.perf_counter() - started) * 1000, 1)}
