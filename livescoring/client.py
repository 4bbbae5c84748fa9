"""The model's narrow interface over HTTP: :class:`ModelClient` asks an OpenAI-compatible server.

The same four members as :class:`livescoring.scorer.Scorer` (``loglikelihood``, ``generate_until``,
``token_count``, ``context_length``), answered by a model server instead of a model in this process:
this project's own (``python -m livescoring serve``), several of them behind a load balancer, or any
server that gives prompt log-probabilities the way vLLM does (``echo`` with ``logprobs``). Standard
library only: the web process that uses it imports no torch.

How each member asks, as lm-evaluation-harness's ``local-completions`` client asks:

* tokenisation in this process where the server offers its tokenizer's file (``GET /tokenizer.json``,
  this project's server), with the ``tokenizers`` package as lm-evaluation-harness tokenises on the
  client; elsewhere (vLLM, SGLang) through the server's ``POST /tokenize``. A question is five
  tokenisations (its context, and the context with each letter), five round trips through the web
  tier's busy interpreter otherwise (5 ms of a 0-shot question alone, 10 at 5 shots). The file is
  trusted once it encodes a probe text as the server's /tokenize does. Either way a text is split
  as the harness splits a context and a continuation (``encode(context + continuation)`` after
  ``encode(context)``, trailing spaces of the context moved to the continuation);
* ``loglikelihood``: one ``POST /v1/completions`` for a batch, every request's tokens as one prompt
  with ``echo``, ``max_tokens: 1`` and ``logprobs: 5``; the continuation's log-probability is the
  sum of its tokens', greedy where each equals the best at its place. The site (remote.py) asks
  less where it can (``after_context``): when every continuation is one token (a question's
  letters), its value is in the distribution after its context, so one generated token per context
  with the likeliest 20 by token id (vLLM's ``return_tokens_as_token_ids``), and for the
  continuations not among them a second such request naming their ids (vLLM's
  ``logprob_token_ids``), answer the batch: the server computes one position's distribution
  instead of every prompt position's (an echo's, which also fills a 90 KB answer for a 0-shot
  question). The echo is asked still for the client's first batch (it checks that the server gives
  prompt log-probabilities at all), and from a server that does not answer those two requests;
* ``generate_until``: ``POST /v1/completions`` with the context's tokens, ``stop`` and greedy decoding.

``shared`` (a request's leading text that others share) is not sent: the server's prefix cache finds
shared beginnings by itself. A server that cannot give prompt log-probabilities is refused with
:class:`BackendUnsuitable`, saying what is missing, never scored.

Long because: one class speaks the one protocol, and each request sits beside the check that the
answer to it is usable (counts, alignment, ids); apart, a request could be read unchecked.
"""
from __future__ import annotations

import http.client
import json
import logging
import math
import threading
import urllib.error
import urllib.request
from collections import OrderedDict
from collections.abc import Sequence

from .scorer import (
    GENERATE_MAX_NEW_TOKENS,
    TOP_NEXT_TOKENS,
    Generation,
    GenerationAnswer,
    Loglikelihood,
    LoglikelihoodAnswer,
    PromptTooLong,
    return_freed_memory,
)

ENCODED_TEXTS = 64  # tokenisations kept (each of a text within a request's size): a question's, counted then scored
HEALTH_TIMEOUT_S = 5.0  # a server busy with passes answers /health in milliseconds; a hung one holds its asker this long
NEXT_TOKENS_ASKED = 20  # the likeliest tokens after a context asked for (vLLM's default max_logprobs)
TOKEN_TEXTS = 256  # single tokens' texts kept (the likeliest next tokens after a question are few and recur)
PREFIX_KEY_HEADER = "X-Prefix-Key"  # what deploy/'s load balancer hashes on: requests that share a beginning meet one server
# Encoded here and by the server before the server's tokenizer file is trusted: spaces and newlines in
# runs, digits, punctuation, accents, a symbol outside the vocabulary's pieces, a special token's text.
TOKENIZER_PROBE = ("The following are multiple choice questions (with answers) about astronomy.\n\n"
                   "What is 3.14 × 10^-5?\nA.  Ünïcödé ☃\tB. x\n\n\nAnswer: A<|im_end|>  ")

log = logging.getLogger(__name__)


class ModelServerError(RuntimeError):
    """The model server answered with an error, or could not be reached; ``status`` is its HTTP
    status (0: no answer), ``retry_after`` its Retry-After in seconds where it gave one."""

    def __init__(self, message: str, status: int = 0, retry_after: int | None = None):
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


class BackendUnsuitable(ModelServerError):
    """The server answers, but not what scoring needs (prompt log-probabilities aligned with the tokens sent)."""


class ModelClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 600.0):
        self.base_url = base_url.rstrip("/").removesuffix("/v1/completions").removesuffix("/v1")
        self.api_key, self.timeout_s = api_key, timeout_s
        self._model: dict | None = None
        # Tokens an echo request asks the server to write: none (the prompt's values are all that is
        # read, and this project's server then reads a question's letters once); 1 for a server that
        # refuses 0, as lm-evaluation-harness always asks.
        self._echo_writes = 0
        # Whether a batch of one-token continuations may be answered from the distributions after
        # their contexts (loglikelihood's ``after_context``): None until the server has given prompt
        # log-probabilities once, False once it has refused the request or not keyed it by token id.
        self._after_context: bool | None = None
        self._asks_token_ids = True  # whether the server honours logprob_token_ids (vLLM's, since 2026)
        self._tokenizer = None  # the server's tokenizer here (tokenizers.Tokenizer); False: /tokenize
        self._loading_tokenizer = threading.Lock()
        self._encoded: OrderedDict[str, list[int]] = OrderedDict()
        self._token_texts: OrderedDict[int, str] = OrderedDict()
        self._encoding = threading.Lock()

    # -- HTTP ---------------------------------------------------------------------------------
    def _open(self, path: str, body: dict | None = None, headers: dict | None = None, timeout_s: float | None = None):
        """The server's answer, open (a GET when there is no body); the caller reads and closes it."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method="GET" if body is None else "POST")
        request.add_header("Content-Type", "application/json")
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            return urllib.request.urlopen(request, timeout=timeout_s or self.timeout_s)
        except urllib.error.HTTPError as error:
            try:
                message = json.loads(error.read())["error"]["message"]
            except (ValueError, KeyError, TypeError, OSError):
                message = error.reason
            retry = error.headers.get("Retry-After")
            raise ModelServerError(f"the model server answered {error.code}: {message}", error.code,
                                   int(retry) if retry and retry.isdigit() else None) from None
        except (urllib.error.URLError, OSError) as error:
            raise ModelServerError(f"no answer from the model server at {self.base_url}: {error}") from None

    def _call(self, path: str, body: dict | None = None, headers: dict | None = None,
              timeout_s: float | None = None) -> dict:
        try:
            with self._open(path, body, headers, timeout_s) as answer:
                return json.loads(answer.read())
        except (OSError, ValueError, http.client.HTTPException) as error:
            raise ModelServerError(f"the model server's answer from {path} broke off or is not JSON: {error}") from None

    def stream_completion(self, tokens: list[int], max_tokens: int, stop: Sequence[str], prefix_key: str = ""):
        """A greedy generation's server-sent chunks, parsed, as they come (every one with the usage:
        the first, before any text, says how many prompt tokens the server's cache held). Closing
        the generator closes the connection: the server stops the generation between tokens."""
        answer = self._open("/v1/completions", {
            "model": self.model()["id"], "prompt": [tokens], "max_tokens": max_tokens, "temperature": 0,
            "stop": [s for s in stop if s], "stream": True,
            "stream_options": {"include_usage": False, "continuous_usage_stats": True}},
            {PREFIX_KEY_HEADER: prefix_key} if prefix_key else None)
        try:
            for line in answer:
                if not line.startswith(b"data: "):
                    continue
                data = line[6:].strip()
                if data == b"[DONE]":
                    return
                chunk = json.loads(data)
                if "error" in chunk:
                    error = chunk["error"]
                    raise ModelServerError(f"the model server stopped the answer: {error.get('message')}",
                                           error.get("code") or 0)
                yield chunk
        except (OSError, http.client.HTTPException) as error:
            raise ModelServerError(f"the model server's stream broke off: {error}") from None
        finally:
            answer.close()

    def tokenizer_info(self) -> dict:
        return self._call("/tokenizer_info")

    def health(self) -> bool:
        """Whether the server answers /health with 200 (its model loaded) within HEALTH_TIMEOUT_S."""
        try:
            self._call("/health", timeout_s=HEALTH_TIMEOUT_S)
        except ModelServerError:
            return False
        return True

    def model(self) -> dict:
        """The served model's entry in ``GET /v1/models`` (its ``id`` and ``max_model_len``)."""
        if self._model is None:
            models = self._call("/v1/models").get("data") or []
            if not models:
                raise BackendUnsuitable(f"{self.base_url}/v1/models lists no model")
            self._model = models[0]
        return self._model

    def model_facts(self) -> dict:
        """The model as a result names it (Scorer.model_facts); what another server does not say is None."""
        model = self.model()
        return {"name": model.get("root") or model["id"], "device": model.get("device"), "dtype": model.get("dtype"),
                "threads": model.get("threads"), "context_length": self.context_length}

    @property
    def context_length(self) -> int:
        length = self.model().get("max_model_len")
        if not isinstance(length, int):
            raise BackendUnsuitable("the server's /v1/models gives no max_model_len (the model's context length)")
        return length

    def local_tokenizer(self):
        """The server's tokenizer in this process (a ``tokenizers.Tokenizer``), or None where the server
        does not offer its file, this process lacks the package, or the file encodes the probe text
        otherwise than the server's /tokenize does: then every text goes to /tokenize. Asked once."""
        with self._loading_tokenizer:
            if self._tokenizer is None:
                self._tokenizer = self._tokenizer_from_server() or False
        return self._tokenizer or None

    def _tokenizer_from_server(self):
        try:
            import tokenizers
        except ImportError:
            return None
        try:
            with self._open("/tokenizer.json") as answer:
                local = tokenizers.Tokenizer.from_str(answer.read().decode())
        except ModelServerError:
            return None  # not offered (vLLM has no such route): /tokenize
        except Exception as error:  # noqa: BLE001 - a file the package cannot read, or a broken answer
            log.warning("the model server's tokenizer file is unusable here (%s); tokenising through /tokenize", error)
            return None
        # Reading the file's JSON left 40 MiB freed in glibc's heap, which it keeps: given back, the
        # tokenizer holds about 9 MiB of the web process.
        return_freed_memory()
        if local.encode(TOKENIZER_PROBE, add_special_tokens=False).ids != self._server_tokens(TOKENIZER_PROBE):
            log.warning("the model server's tokenizer file encodes otherwise than its /tokenize; tokenising there")
            return None
        return local

    def encode(self, text: str) -> list[int]:
        """The text's tokens (no special tokens), by the server's tokenizer here or its /tokenize
        (``local_tokenizer``); the last ENCODED_TEXTS are kept, since a question is counted (to fit
        its prompt) before it is scored."""
        with self._encoding:
            if text in self._encoded:
                self._encoded.move_to_end(text)
                return self._encoded[text]
        local = self.local_tokenizer()
        tokens = local.encode(text, add_special_tokens=False).ids if local is not None else self._server_tokens(text)
        with self._encoding:
            self._encoded[text] = tokens
            while len(self._encoded) > ENCODED_TEXTS:
                self._encoded.popitem(last=False)
        return tokens

    def _server_tokens(self, text: str) -> list[int]:
        try:
            tokens = self._call("/tokenize", {"prompt": text, "add_special_tokens": False}).get("tokens")
        except ModelServerError as error:
            if error.status not in (404, 405):
                raise
            # llama-cpp-python's server, for one, tokenises only at /extras/tokenize, with fields of its own.
            raise BackendUnsuitable(
                f"the server has no POST /tokenize (it answered {error.status}): scoring needs vLLM's route "
                "({\"prompt\": text} gives {\"tokens\": [...]}) to split a context from its continuation with the "
                "model's own tokenizer") from None
        if not isinstance(tokens, list):
            raise BackendUnsuitable("the server's /tokenize gives no 'tokens'")
        return tokens

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        context_ids = self.encode(context)
        return context_ids, self.encode(context + continuation)[len(context_ids):]

    def token_count(self, context: str, continuations: Sequence[str] = ()) -> int:
        if not continuations:
            return len(self.encode(context))
        pairs = [self.encode_pair(context, c) for c in continuations]
        return len(pairs[0][0]) + max(len(c) for _, c in pairs)

    def _check_fits(self, tokens: int) -> None:
        if tokens > self.context_length:
            raise PromptTooLong(f"the request takes {tokens} tokens; the model's context holds {self.context_length}")

    def token_text(self, token: int) -> str:
        """One token's text, from the server's /detokenize (what an echo's top_logprobs names it); the
        last TOKEN_TEXTS are kept."""
        with self._encoding:
            if token in self._token_texts:
                self._token_texts.move_to_end(token)
                return self._token_texts[token]
        text = self._decoded([token])
        with self._encoding:
            self._token_texts[token] = text
            while len(self._token_texts) > TOKEN_TEXTS:
                self._token_texts.popitem(last=False)
        return text

    # -- the interface ------------------------------------------------------------------------
    def loglikelihood(self, requests: Sequence[Loglikelihood], stop=None, prefix_key: str = "",
                      after_context: bool = False) -> list[LoglikelihoodAnswer]:
        """Each request's answer, from one echo request for the batch (lm-evaluation-harness's); with
        ``after_context``, a batch whose every continuation is one token from the distributions after
        its contexts where the server gives them (the module's docstring says when)."""
        pairs = [self.encode_pair(r.context, r.continuation) for r in requests]
        for context_ids, continuation_ids in pairs:
            if not context_ids or not continuation_ids:
                raise ValueError("a context and a continuation each need at least one token")
            self._check_fits(len(context_ids) + len(continuation_ids))
        headers = {PREFIX_KEY_HEADER: prefix_key} if prefix_key else None
        if after_context and self._after_context and all(len(k) == 1 for _, k in pairs):
            answers = self._from_next_tokens(pairs, headers)
            if answers is not None:
                return answers
        body = {"model": self.model()["id"], "prompt": [c + k for c, k in pairs], "echo": True,
                "logprobs": TOP_NEXT_TOKENS, "max_tokens": self._echo_writes, "temperature": 0}
        try:
            answer = self._call("/v1/completions", body, headers)
        except ModelServerError as error:
            if error.status != 400 or self._echo_writes:
                raise
            # A server that writes at least one token (as lm-evaluation-harness asks): ask so from now on.
            self._echo_writes = 1
            answer = self._call("/v1/completions", {**body, "max_tokens": 1}, headers)
        choices = sorted(answer.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != len(pairs):
            raise BackendUnsuitable(f"asked for {len(pairs)} prompts' log-probabilities, got {len(choices)} answers")
        answers = [self._read(choice, context_ids, continuation_ids, self._echo_writes)
                   for choice, (context_ids, continuation_ids) in zip(choices, pairs, strict=True)]
        if self._after_context is None:  # the server gives prompt log-probabilities: it may be asked less
            self._after_context = True
        return answers

    def _from_next_tokens(self, pairs: list[tuple[list[int], list[int]]], headers) -> list[LoglikelihoodAnswer] | None:
        """The answers to one-token continuations from the distributions after their contexts: one
        generated token per distinct context with the likeliest NEXT_TOKENS_ASKED by token id (the
        likeliest TOP_NEXT_TOKENS with their texts, and each continuation among them), then, for
        continuations not among them, a second request naming their ids (vLLM's
        ``logprob_token_ids``; this project's server keeps the last prompts' distributions, so it
        runs no pass for it). Each value is an echo's bit for bit on this project's server, which
        computes the row after a context one way for both. None where the echo must be asked: a
        continuation's value was not given, two of the likeliest share a text (an echo names them
        once), or the server does not answer this way (then never again)."""
        contexts = list(dict.fromkeys(tuple(context_ids) for context_ids, _ in pairs))
        after = self._after(contexts, {"logprobs": NEXT_TOKENS_ASKED}, headers)
        if after is None:
            self._after_context = False
            return None
        likeliest = {}
        for context, top in after.items():
            likeliest[context] = sorted(top.items(), key=lambda kv: -kv[1])[:TOP_NEXT_TOKENS]
        missing = sorted({token for context_ids, (token,) in pairs if token not in after[tuple(context_ids)]})
        if missing:
            if not self._asks_token_ids:
                return None
            wanted = [c for c in contexts if any(t not in after[c] for t in missing)]
            named = self._after(wanted, {"logprobs": 1, "logprob_token_ids": missing}, headers)
            if named is None or any(t not in named[c] for c in wanted for t in missing):
                self._asks_token_ids = False  # a server that ignores the field: the echo from now on
                return None
            for context in wanted:
                after[context] = {**named[context], **after[context]}
        answers = []
        for context_ids, (token,) in pairs:
            top = likeliest[tuple(context_ids)]
            texts = [self.token_text(t) for t, _ in top]
            if len(set(texts)) < len(texts):
                return None
            value = after[tuple(context_ids)][token]
            answers.append(LoglikelihoodAnswer(value, value == top[0][1], (value,), len(context_ids),
                                               tuple((text, math.exp(lp)) for text, (_, lp) in zip(texts, top, strict=True))))
        return answers

    def _after(self, contexts: list[tuple[int, ...]], asked: dict, headers) -> dict | None:
        """{context: {token id: log-probability}} at the one token written after each context, as
        ``asked`` names them; None when the server refuses the request (400) or does not key them by
        token id."""
        body = {"model": self.model()["id"], "prompt": [list(c) for c in contexts], "max_tokens": 1,
                "temperature": 0, "return_tokens_as_token_ids": True, **asked}
        try:
            answer = self._call("/v1/completions", body, headers)
        except ModelServerError as error:
            if error.status != 400:
                raise
            return None
        choices = sorted(answer.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != len(contexts):
            return None
        after = {}
        for context, choice in zip(contexts, choices, strict=True):
            top = ((choice.get("logprobs") or {}).get("top_logprobs") or [None])[0]
            if not isinstance(top, dict) or not all(isinstance(k, str) and k.startswith("token_id:") for k in top):
                return None
            after[context] = {int(k.removeprefix("token_id:")): v for k, v in top.items()}
        return after

    @staticmethod
    def _read(choice: dict, context_ids: list[int], continuation_ids: list[int], written: int) -> LoglikelihoodAnswer:
        logprobs = choice.get("logprobs") or {}
        values, tops = logprobs.get("token_logprobs"), logprobs.get("top_logprobs")
        n = len(context_ids) + len(continuation_ids)
        # echo gives one value per prompt token, the first null (nothing comes before it), and one for
        # each token it wrote.
        expected = n + written
        if (not isinstance(values, list) or not isinstance(tops, list) or len(values) != expected
                or len(tops) != expected or values[0] is not None):
            raise BackendUnsuitable(
                "the server does not give prompt log-probabilities aligned with the tokens sent (echo with logprobs "
                f"should give {expected} values for {n} prompt tokens, the first null; got "
                f"{len(values) if isinstance(values, list) else 'none'}{ModelClient._miscount(values, expected)}); "
                "it cannot score multiple-choice questions")
        ctx = len(context_ids)
        mine, mine_top = values[ctx:n], tops[ctx:n]
        if any(v is None for v in mine):
            raise BackendUnsuitable("the server left a continuation token's log-probability empty")
        greedy = all(v == max(top.values()) for v, top in zip(mine, mine_top, strict=True))
        after = tops[ctx] or {}
        next_tokens = tuple((text, math.exp(lp)) for text, lp in sorted(after.items(), key=lambda kv: -kv[1]))
        return LoglikelihoodAnswer(math.fsum(mine), greedy, tuple(mine), ctx, next_tokens[:TOP_NEXT_TOKENS])

    @staticmethod
    def _miscount(values, expected: int) -> str:
        """What a wrong count of echo values says, where its shape is known. Both are llama-cpp-python's
        server's (0.3.36, the model service's docs, "Another server"), whose values look plausible: asked to
        write 0 tokens it writes until it stops; asked to write 1, it gives none for it, each prompt
        token's value being the log-probability of that token coming next after itself."""
        if not isinstance(values, list):
            return ""
        if len(values) > expected:
            return (f", {len(values) - expected} more: it wrote tokens it was not asked for, as llama-cpp-python's "
                    "server does with max_tokens 0")
        if len(values) == expected - 1:
            return (", one short: no value for the token it wrote, as llama-cpp-python's server answers, whose "
                    "value for each prompt token is that token's log-probability of coming next after itself, "
                    "one place late")
        return ""

    def _written_ids(self, choice: dict, context_ids: list[int]) -> list[int]:
        """The written tokens' ids: vLLM's ``return_tokens_as_token_ids`` gives "token_id:N" (this
        project's server too); a server that gives text instead (SGLang) has the text tokenised after
        the context, as the harness splits a continuation."""
        tokens = (choice.get("logprobs") or {}).get("tokens") or []
        if all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
            return [int(t.removeprefix("token_id:")) for t in tokens]
        whole = self.encode(self._decoded(context_ids) + "".join(tokens))
        return whole[len(context_ids):]

    def _decoded(self, tokens: list[int]) -> str:
        prompt = self._call("/detokenize", {"tokens": tokens}).get("prompt")
        if not isinstance(prompt, str):
            raise BackendUnsuitable("the server's /detokenize gives no 'prompt'")
        return prompt

    def generate_until(self, requests: Sequence[Generation], stop=None, prefix_key: str = "") -> list[GenerationAnswer]:
        answers = []
        for request in requests:
            ids = self.encode(request.context)
            if not ids:
                raise ValueError("a context needs at least one token")
            self._check_fits(len(ids) + request.max_gen_toks)
            answer = self._call("/v1/completions", {
                "model": self.model()["id"], "prompt": [ids], "max_tokens": request.max_gen_toks or GENERATE_MAX_NEW_TOKENS,
                "temperature": 0, "stop": [s for s in request.until if s], "logprobs": 0,
                "return_tokens_as_token_ids": True},
                {PREFIX_KEY_HEADER: prefix_key} if prefix_key else None)
            choice = (answer.get("choices") or [{}])[0]
            reason = choice.get("finish_reason")
            stopped = "length" if reason == "length" else "stop" if choice.get("stop_reason") else "end of text"
            written = self._written_ids(choice, ids)
            if stopped == "end of text":  # the end-of-text token ends the text unwritten, as Scorer counts it
                written = written[:-1]
            answers.append(GenerationAnswer(choice.get("text", ""), stopped, tuple(written), len(ids)))
        return answers
