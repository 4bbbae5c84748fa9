"""The model server: one process that owns the model and speaks the OpenAI API subset evaluation tools use.

    python -m livescoring serve --port 8001 [--api-key KEY]

lm-evaluation-harness's ``local-completions`` and ``local-chat-completions`` clients work against it
unchanged, as they do against vLLM or SGLang (the model server's section of the docs has the
routes, the settings and the exact client command). A plain WSGI application under waitress: no web
framework, no site, no task. What it knows is requests; readers, fairness between them and their
budgets belong to the web tier in front of it.

One thread, :class:`ModelWorker` (model_thread.py), owns the model and its prompt reader (prompt_reader.py, the prefix
cache). Every request is a job: a generator that runs one forward pass per step. The worker steps the
running jobs in turn (at most ``max_active`` at once, so a long prompt does not hold back a short
generation), and takes new ones from a bounded queue: past ``max_waiting`` waiting jobs a request
gets 429 with Retry-After. A job whose client left (waitress's ``client_disconnected``, or a stream
closed) stops before its next pass.
"""
from __future__ import annotations

import hmac
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

from . import openai_api as api
from .generate import MAX_NEW_TOKENS
from .model import ModelSettings
from .model_thread import MAX_WAITING, Job, ModelWorker, generation_steps, map_large_allocations
from .prompt_reader import CACHE_BYTES, PromptRead

log = logging.getLogger("livescoring.server")

MAX_BODY_BYTES = 8 * 2**20
REQUEST_TIMEOUT_S = 600.0  # a request waits at most this long for its next result
SHUTDOWN_GRACE_S = 30.0


def _top_dict(strings: Callable, pairs: list[tuple[int, float]], k: int, chosen: tuple[int, float] | None) -> dict:
    """The likeliest ``k`` at a place as {token text: log-probability}, with the chosen token added
    as vLLM adds it (a text two tokens share keeps the likelier)."""
    wanted = list(pairs[:k])
    if chosen is not None and chosen[0] not in {t for t, _ in wanted}:
        wanted.append(chosen)
    out: dict = {}
    for token, logprob in zip(strings([t for t, _ in wanted]), wanted, strict=True):
        out.setdefault(token, logprob[1])
    return out


class ModelServer:
    """The WSGI application."""

    def __init__(self, worker: ModelWorker, served_name: str, api_key: str | None = None,
                 max_prompt_tokens: int = 0, max_request_tokens: int = 65536, timeout_s: float = REQUEST_TIMEOUT_S):
        self.worker, self.served_name, self.api_key = worker, served_name, api_key or None
        self.max_prompt_tokens, self.max_request_tokens, self.timeout_s = max_prompt_tokens, max_request_tokens, timeout_s
        self.routes = {
            ("GET", "/health"): self.health, ("GET", "/v1/models"): self.models,
            ("GET", "/tokenizer_info"): self.tokenizer_info, ("GET", "/tokenizer.json"): self.tokenizer_file,
            ("POST", "/tokenize"): self.tokenize,
            ("POST", "/detokenize"): self.detokenize, ("POST", "/v1/completions"): self.completions,
            ("POST", "/v1/chat/completions"): self.chat_completions,
        }

    # -- WSGI ---------------------------------------------------------------------------------
    def __call__(self, environ, start_response):
        method, path = environ.get("REQUEST_METHOD", "GET"), environ.get("PATH_INFO", "/")
        try:
            handler = self.routes.get(("GET" if method == "HEAD" else method, path))
            if handler is None:
                if any(p == path for _, p in self.routes):
                    raise api.ApiError(405, f"{method} is not allowed on {path}")
                raise api.ApiError(404, f"no route {path}; see GET /v1/models", kind="NotFoundError")
            if path != "/health":
                self._check_key(environ)
            body = self._body(environ) if method == "POST" else {}
            status, answer = handler(body, environ)
        except api.ApiError as error:
            status, answer = error.status, error
        except Exception:  # noqa: BLE001 - logged with its traceback here, a JSON 500 for the client
            log.exception("request failed: %s %s", method, path)
            status, answer = 500, api.ApiError(500, "internal error", kind="server_error")
        if isinstance(answer, api.ApiError):
            headers = [("Retry-After", str(answer.retry_after))] if answer.retry_after else []
            return self._json(start_response, status, answer.body(), headers)
        if isinstance(answer, dict | list | bytes):
            return self._json(start_response, status, answer)
        start_response(f"{status} OK", [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"),
                                         ("X-Accel-Buffering", "no")])
        return answer  # an iterator of server-sent events; waitress closes it when the client leaves

    @staticmethod
    def _json(start_response, status: int, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
                  413: "Content Too Large", 429: "Too Many Requests", 499: "Client Closed Request",
                  500: "Internal Server Error", 503: "Service Unavailable", 504: "Gateway Timeout"}.get(status, "")
        start_response(f"{status} {reason}", [("Content-Type", "application/json"), ("Content-Length", str(len(data))),
                                              *headers])
        return [data]

    def _check_key(self, environ) -> None:
        if self.api_key is None:
            return
        given = environ.get("HTTP_AUTHORIZATION", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.api_key}".encode()):
            raise api.ApiError(401, "send the API key as 'Authorization: Bearer <key>'", kind="authentication_error")

    @staticmethod
    def _body(environ) -> dict:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise api.ApiError(400, "Content-Length is not a number") from None
        if length > MAX_BODY_BYTES:
            raise api.ApiError(413, f"the request body is over {MAX_BODY_BYTES} bytes")
        raw = environ["wsgi.input"].read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError):
            raise api.ApiError(400, "the request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise api.ApiError(400, "the request body must be a JSON object")
        return body

    # -- the small routes ---------------------------------------------------------------------
    def _ready(self):
        worker = self.worker
        if worker.state != "ready":
            status = 503
            raise api.ApiError(status, worker.message, kind="unavailable", retry_after=5 if worker.state == "loading" else None)
        return worker.loaded

    def health(self, body, environ):
        self._ready()
        return 200, {"status": "ok"}

    def models(self, body, environ):
        loaded = self._ready()
        return 200, {"object": "list", "data": [{
            "id": self.served_name, "object": "model", "created": 0, "owned_by": "annotated-papers",
            "root": loaded.name, "max_model_len": loaded.context_length,
            # Beyond vLLM's fields: what a page says of the model (ModelClient.model_facts).
            "device": loaded.device, "dtype": loaded.dtype, "threads": loaded.threads}]}

    def tokenizer_info(self, body, environ):
        loaded = self._ready()
        tokenizer = loaded.tokenizer
        return 200, {"tokenizer_class": type(tokenizer).__name__, "eos_token": tokenizer.eos_token,
                     "bos_token": tokenizer.bos_token, "pad_token": tokenizer.pad_token,
                     "unk_token": getattr(tokenizer, "unk_token", None),
                     "chat_template": getattr(tokenizer, "chat_template", None),
                     "model_max_length": loaded.context_length, "vocab_size": len(tokenizer)}

    def tokenizer_file(self, body, environ):
        """The tokenizer as the tokenizers library saves it (tokenizer.json; not a vLLM route): a client
        with that package tokenises as this server does, without a round trip per text (client.py)."""
        self._ready()
        data = self.worker.tokenizer_file()
        if data is None:
            raise api.ApiError(404, "this model's tokenizer is not a tokenizers-library one; use POST /tokenize",
                               kind="NotFoundError")
        return 200, data

    def tokenize(self, body, environ):
        loaded = self._ready()
        prompt, messages, special, _ = api.tokenize_request(body)
        text = prompt if messages is None else self.worker.chat_text(messages)
        tokens = self.worker.encode(text, special)
        return 200, {"tokens": tokens, "count": len(tokens), "max_model_len": loaded.context_length}

    def detokenize(self, body, environ):
        loaded = self._ready()
        return 200, {"prompt": self.worker.decode(api.detokenize_request(body, len(loaded.tokenizer)))}

    # -- completions --------------------------------------------------------------------------
    def _fit(self, prompts: list[list[int]], max_tokens: int) -> None:
        context = self.worker.loaded.context_length
        cap = self.max_prompt_tokens or context
        for tokens in prompts:
            if len(tokens) > cap:
                raise api.ApiError(413, f"a prompt has {len(tokens)} tokens; this server takes at most {cap}", "prompt")
            if len(tokens) + max_tokens > context:
                raise api.ApiError(400, f"This model's maximum context length is {context} tokens. However, you "
                                        f"requested {len(tokens) + max_tokens} tokens ({len(tokens)} in the prompt, "
                                        f"{max_tokens} for the completion).", "prompt")
        total = sum(map(len, prompts))
        if total > self.max_request_tokens:
            raise api.ApiError(413, f"the request's prompts hold {total} tokens; at most {self.max_request_tokens} "
                                    "in one request: send fewer prompts per request", "prompt")

    def _submit(self, steps, environ, prompts: list[list[int]], max_tokens: int) -> Job:
        return self.worker.submit(steps, environ.get("waitress.client_disconnected") or (lambda: False),
                                  max(map(len, prompts)) + max_tokens)

    def _run(self, steps, environ, prompts: list[list[int]], max_tokens: int):
        """Run ``steps`` (reading ``prompts`` one by one) as a job and wait for its result in this thread."""
        job = self._submit(steps, environ, prompts, max_tokens)
        while True:
            kind, value = job.next(self.timeout_s)
            if kind == "done":
                return value
            if kind == "error":
                raise value

    def completions(self, body, environ):
        loaded = self._ready()
        api.check_model(body, self.served_name)
        request = api.completion_request(body, len(loaded.tokenizer), MAX_NEW_TOKENS)
        special = body.get("add_special_tokens", True) is not False  # vLLM's default for text prompts
        prompts = [self.worker.encode(p, special) if isinstance(p, str) else list(p) for p in request.prompts]
        sampling = request.sampling
        self._fit(prompts, sampling.max_tokens)
        if sampling.stream:
            return 200, self._stream(prompts, sampling, environ, chat=False)
        reader = self.worker.reader
        # The prompt's own tokens' values (the head over every position) only where the answer shows them.
        prompt_values = request.echo and sampling.logprobs is not None or request.prompt_logprobs is not None

        def steps():
            results, before_last = [], {}
            for tokens in prompts:
                if sampling.max_tokens:
                    results.append((yield from generation_steps(reader, tokens, sampling.max_tokens, sampling.stop,
                                                                False, prompt_values)))
                    continue
                # An echo that writes nothing reads the prompt without its last token (with_last), once
                # for prompts that differ only there (a question's letters).
                if len(tokens) == 1:
                    read = PromptRead(list(tokens), [], [], [], None, 0)
                else:
                    if tuple(tokens[:-1]) not in before_last:
                        before_last[tuple(tokens[:-1])] = yield from reader.steps(tokens[:-1], values=prompt_values)
                    read = reader.with_last(before_last[tuple(tokens[:-1])], tokens[-1])
                results.append((read, [], [], "", "length", None))
            return results

        results = self._run(steps(), environ, prompts, sampling.max_tokens)
        choices = [self._choice(i, prompt, tokens, result, request)
                   for i, (prompt, tokens, result) in enumerate(zip(request.prompts, prompts, results, strict=True))]
        generated = sum(len(r[1]) for r in results)
        return 200, api.completion_answer(self.served_name, choices, sum(map(len, prompts)), generated)

    def _choice(self, index: int, prompt, tokens: list[int], result, request: api.CompletionRequest) -> dict:
        read, written, rows, text, finish, stop_string = result
        k = request.sampling.logprobs
        if request.echo:
            text = (prompt if isinstance(prompt, str) else self.worker.decode(tokens)) + text
        choice = {"index": index, "text": text, "logprobs": None, "finish_reason": finish, "stop_reason": stop_string}
        strings = self.worker.token_strings
        if request.token_ids:  # vLLM's return_tokens_as_token_ids: "token_id:N", exact where text is ambiguous
            def strings(tokens):
                return [f"token_id:{t}" for t in tokens]
        if k is not None:
            shown_tokens, chosen, top = [], [], []
            if request.echo:
                shown_tokens += tokens
                chosen += [None] + read.chosen
                top += [None] + [_top_dict(strings, read.top[i], k, (tokens[i + 1], read.chosen[i]))
                                 for i in range(len(tokens) - 1)]
            for token, row in zip(written, rows, strict=True):
                logprob = row[token].item()
                shown_tokens.append(token)
                chosen.append(logprob)
                if request.logprob_token_ids:  # these ids' values, with the written token's, not the likeliest k
                    asked = request.logprob_token_ids
                    top.append(_top_dict(strings, [(t, row[t].item()) for t in asked], len(asked), (token, logprob)))
                else:
                    top.append(_top_dict(strings, self._top_of(row), k, (token, logprob)))
            choice["logprobs"] = api.logprobs_block(strings(shown_tokens), chosen, top)
        if request.prompt_logprobs is not None:
            choice["prompt_logprobs"] = self._prompt_logprobs(tokens, read, request.prompt_logprobs)
        return choice

    @staticmethod
    def _top_of(row) -> list[tuple[int, float]]:
        import torch

        values, ids = torch.topk(row, api.MAX_LOGPROBS)
        return list(zip(ids.tolist(), values.tolist(), strict=True))

    def _prompt_logprobs(self, tokens: list[int], read, k: int) -> list:
        """vLLM's ``prompt_logprobs``: per prompt token after the first, {token id: {logprob, rank,
        decoded_token}} for the token itself and the likeliest ``k``."""
        out: list = [None]
        for i in range(len(tokens) - 1):
            entries = {tokens[i + 1]: (read.chosen[i], read.ranks[i])}
            for rank, (token, logprob) in enumerate(read.top[i][:k], start=1):
                entries.setdefault(token, (logprob, rank))
            names = self.worker.token_strings(list(entries))
            out.append({str(token): {"logprob": lp, "rank": rank, "decoded_token": name}
                        for (token, (lp, rank)), name in zip(entries.items(), names, strict=True)})
        return out

    # -- chat and streams ---------------------------------------------------------------------
    def chat_completions(self, body, environ):
        self._ready()
        api.check_model(body, self.served_name)
        request = api.chat_request(body, MAX_NEW_TOKENS)
        tokens = self.worker.encode(self.worker.chat_text(request.messages), False)
        sampling = request.sampling
        self._fit([tokens], sampling.max_tokens)
        if sampling.stream:
            return 200, self._stream([tokens], sampling, environ, chat=True)
        reader = self.worker.reader
        read, written, rows, text, finish, stop_string = self._run(
            generation_steps(reader, tokens, sampling.max_tokens, sampling.stop, False), environ, [tokens],
            sampling.max_tokens)
        return 200, api.chat_answer(self.served_name, text, finish, stop_string, len(tokens), len(written))

    def _stream(self, prompts: list[list[int]], sampling: api.Sampling, environ, chat: bool) -> Iterator[bytes]:
        """Server-sent events: a chunk per piece of text, a last chunk with the finish reason per
        prompt, then ``[DONE]``. With ``stream_options.continuous_usage_stats`` every chunk carries
        the usage, and a first chunk (no text) says, before the prompt's passes, how many of its
        tokens the prefix cache holds (``prompt_tokens_details.cached_tokens``); with
        ``include_usage`` a last chunk carries it. The job is submitted before the first byte (a
        full queue is a 429, not a broken stream); closing the iterator (the client left) cancels it."""
        reader = self.worker.reader

        def steps():
            for index, tokens in enumerate(prompts):
                result = yield from generation_steps(reader, tokens, sampling.max_tokens, sampling.stop, True)
                yield {"index": index, "finish": result[4], "stop_reason": result[5], "tokens": len(result[1])}

        return self._events(self._submit(steps(), environ, prompts, sampling.max_tokens), prompts, sampling, chat)

    def _events(self, job: Job, prompts: list[list[int]], sampling: api.Sampling, chat: bool) -> Iterator[bytes]:
        chunks = api.StreamChunks(self.served_name, prompts, sampling, chat)
        try:
            if chat:
                yield chunks.chunk(None, delta={"role": "assistant", "content": ""})
            while True:
                kind, value = job.next(self.timeout_s)
                if kind == "error":
                    yield api.sse(value.body())
                    break
                if kind == "done":
                    break
                piece = chunks.on_event(value)
                if piece is not None:
                    yield piece
            if sampling.include_usage:
                yield chunks.usage_chunk()
            yield api.sse(b"[DONE]")
        finally:
            job.cancelled.set()


def serve(settings: ModelSettings, host: str, port: int, *, api_key: str | None = None, served_name: str | None = None,
          cache_bytes: int = CACHE_BYTES, max_waiting: int = MAX_WAITING, max_prompt_tokens: int = 0,
          threads: int = 16) -> None:
    """Load the model in the worker and serve until SIGTERM or SIGINT (then let requests in flight
    finish, for at most SHUTDOWN_GRACE_S)."""
    import waitress

    map_large_allocations()
    worker = ModelWorker(settings, cache_bytes, max_waiting)
    worker.start()
    name = served_name or settings.model
    server = waitress.create_server(
        ModelServer(worker, name, api_key, max_prompt_tokens), host=host, port=port, threads=threads,
        ident="annotated-papers-model", max_request_body_size=MAX_BODY_BYTES, channel_request_lookahead=1)
    stopping = threading.Event()

    def stop(signum, _frame) -> None:
        if stopping.is_set():
            return
        stopping.set()
        print(f"Received {signal.Signals(signum).name}: finishing requests in flight", flush=True)
        server.accepting = False
        server.del_channel()
        server.socket.close()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"Model server on http://{host}:{port}/ (model {name!r})", flush=True)
    from waitress import wasyncore

    while not stopping.is_set():
        wasyncore.loop(timeout=0.2, map=server._map, use_poll=True, count=1)
    deadline = time.monotonic() + SHUTDOWN_GRACE_S
    while (server.task_dispatcher.active_count or worker.running or worker.waiting) and time.monotonic() < deadline:
        wasyncore.loop(timeout=0.05, map=server._map, use_poll=True, count=1)
    server.task_dispatcher.shutdown(timeout=2)
    print("Stopped.", flush=True)
    os._exit(0)  # torch's native threads abort a normal interpreter teardown (as app.py says)
