"""A made-up OpenAI-style model server on loopback, for tests without the model: a helper module
(imported by name, as content_helpers), shared by tests/model/test_evaluate_server.py and
tests/model/test_site_client.py."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from livescoring.client import PREFIX_KEY_HEADER


class FakeServer(ThreadingHTTPServer):
    """An OpenAI-style completions server on loopback with made-up numbers; a token is a byte of the
    text. ``echo``: whether it gives prompt log-probabilities (False: only the written token's, as
    llama.cpp's server does). ``dies_after``: answers that many completions, then stops in the middle
    of the next answer and closes, as a server killed mid-run."""

    daemon_threads = True

    def __init__(self, echo: bool = True, dies_after: int | None = None, tokenizer=None, shift: int = 0):
        super().__init__(("127.0.0.1", 0), FakeHandler)
        self.echo, self.dies_after, self.keys, self.completions = echo, dies_after, [], 0
        # ``tokenizer`` (a tokenizers.Tokenizer): its file at GET /tokenizer.json, and /tokenize by it, each
        # id plus ``shift`` (not 0: a file that does not encode as the server does). None: no such file.
        self.tokenizer, self.shift = tokenizer, shift
        self.tokenized: list[str] = []  # every /tokenize request's text
        self.bodies: list[dict] = []  # every completions request, as sent
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class FakeHandler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # quiet
        pass

    def answer(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/tokenizer.json":
            if self.server.tokenizer is None:
                return self.send_error(404)
            return self.answer(json.loads(self.server.tokenizer.to_str()))
        return self.answer({"data": [{"id": "fake", "max_model_len": 8192}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        if self.path == "/tokenize":
            server.tokenized.append(body["prompt"])
            if server.tokenizer is None:
                return self.answer({"tokens": list(body["prompt"].encode())})
            ids = server.tokenizer.encode(body["prompt"], add_special_tokens=False).ids
            return self.answer({"tokens": [token + server.shift for token in ids]})
        with server.lock:
            server.completions += 1
            dying = server.dies_after is not None and server.completions > server.dies_after
            server.keys.append(self.headers.get(PREFIX_KEY_HEADER))
            server.bodies.append(body)
        if dying:  # killed while answering: the headers and part of the body, then the connection closes
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"choices": [')
            self.close_connection = True
            threading.Thread(target=server.stop).start()
            return None
        written = body.get("max_tokens", 16)
        return self.answer({"choices": [self.choice(i, ids, written) for i, ids in enumerate(body["prompt"])]})

    def choice(self, index: int, ids: list[int], written: int) -> dict:
        """vLLM's echo: a value per prompt token (the first null), then one per written token."""
        values = [None] + [-0.1 - (token % 7) / 10 for token in ids[1:]] + [-0.1] * written
        if not self.server.echo:
            values = [-0.1]  # the written token's alone
        tops = [None if v is None else {"x": v} for v in values]
        return {"index": index, "text": "x", "logprobs": {"token_logprobs": values, "top_logprobs": tops}}
