"""A batch run's model on model servers: what ``evaluate --server URL [URL ...]`` and the
conformance command score with instead of a model in this process.

A :class:`ServerSet` has the scorer's narrow interface (``loglikelihood``, ``generate_until``,
``token_count``, ``context_length``, ``model_facts``), so the evaluate machinery (packed batches,
workers, resume) runs on it unchanged: a batch's questions go in one request, as on a Scorer.
Each worker is a twin asking its own server first (worker i asks server i mod N: round robin); a
server that gives no answer, an error 5xx or 429 (busy) has the call retried on the next one, and
the worker stays there, so a run loses nothing when one server stops mid-run. A batch's requests
carry :data:`livescoring.client.PREFIX_KEY_HEADER`, a digest of the text they share (the prompt's
header and worked examples, which the benchmark, subject, shots and template decide; the web
tier's key, livescoring.remote.prefix_key, so live questions meet the same server), so that a
load balancer hashing on it (deploy/'s nginx upstream) sends one subject's batches to one server,
whose prefix cache then holds its worked examples. Before a run, :meth:`ServerSet.check` asks
every server for a short prompt's log-probabilities: a server that cannot give them aligned with
the tokens sent (llama.cpp's server gives them only for the tokens it writes) is refused with
:class:`livescoring.client.BackendUnsuitable`, saying what is missing, never scored.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace

from livescoring.client import BackendUnsuitable, ModelClient, ModelServerError
from livescoring.remote import ChatTemplate, prefix_key
from livescoring.scorer import Loglikelihood

ROUNDS = 3  # times each server is tried for one call before the run stops (its rows saved, resumable)
ROUND_PAUSE_S = 1.0  # between rounds: a server restarting gets a moment
MAX_RETRY_AFTER_S = 10  # the longest a busy server's Retry-After is waited before the next server is asked
PROBE = Loglikelihood("The answer is", " A")  # what check() asks each server: two prompt tokens or more


def retryable(error: ModelServerError) -> bool:
    """No answer, a busy server or a server error: another server (or this one later) may answer."""
    return not isinstance(error, BackendUnsuitable) and (error.status == 0 or error.status == 429
                                                         or error.status >= 500)


class ServerSet:
    """One worker's view of the model servers; :meth:`twin` makes the next worker's."""

    def __init__(self, urls: Sequence[str] = (), api_key: str | None = None, first: int = 0,
                 clients: Sequence[ModelClient] = (), spread: int = 0):
        self.clients = list(clients) or [ModelClient(url, api_key) for url in urls]
        if not self.clients:
            raise ValueError("name at least one model server")
        # Workers start on the first ``spread`` servers in turn (after check(): those that answered).
        self.spread = spread or len(self.clients)
        self.at = first % self.spread  # the server this worker asks first
        self._twins = first
        # What evaluate reads of a Scorer's model: the tokenizer, for the chat template (check() asks a server).
        self.loaded = SimpleNamespace(tokenizer=None)

    @property
    def urls(self) -> list[str]:
        return [client.base_url for client in self.clients]

    def twin(self) -> ServerSet:
        """The next worker: the same servers (the clients hold no per-request state), the next one first."""
        self._twins += 1
        twin = ServerSet(clients=self.clients, first=self._twins, spread=self.spread)
        twin.loaded = self.loaded
        return twin

    def _ask(self, call: Callable[[ModelClient], object]):
        last = None
        for attempt in range(ROUNDS * len(self.clients)):
            if attempt and attempt % len(self.clients) == 0:
                time.sleep(ROUND_PAUSE_S)
            try:
                return call(self.clients[self.at])
            except ModelServerError as error:
                if not retryable(error):
                    raise
                last = error
                if error.status == 429:
                    time.sleep(min(error.retry_after or 1, MAX_RETRY_AFTER_S))
                self.at = (self.at + 1) % len(self.clients)
        raise ModelServerError(f"no model server answered (each tried {ROUNDS} times); the last: {last}",
                               last.status, last.retry_after)

    # -- the scorer's interface ---------------------------------------------------------------
    @property
    def context_length(self) -> int:
        return self._ask(lambda client: client.context_length)

    def model_facts(self) -> dict:
        return self._ask(lambda client: client.model_facts())

    def token_count(self, context: str, continuations: Sequence[str] = ()) -> int:
        return self._ask(lambda client: client.token_count(context, continuations))

    def loglikelihood(self, requests: Sequence, stop=None) -> list:
        key = prefix_key(requests[0].shared) if requests else ""
        # A question's letters from the distribution after its prompt where the server gives it (as the
        # site asks; the same values as the echo's on this project's server): not every position's.
        return self._ask(lambda client: client.loglikelihood(requests, stop, prefix_key=key, after_context=True))

    def generate_until(self, requests: Sequence, stop=None) -> list:
        key = prefix_key(requests[0].shared) if requests else ""
        return self._ask(lambda client: client.generate_until(requests, stop, prefix_key=key))

    # -- before a run -------------------------------------------------------------------------
    def check(self) -> list[str]:
        """Ask every server for its model and a short prompt's log-probabilities. Raises
        BackendUnsuitable for a server that answers but cannot score (or servers serving different
        models) and ModelServerError when none answers; returns the servers that gave no answer,
        in words (the run goes on without them, retrying them only when the others fail)."""
        names, down = {}, []
        for client in self.clients:
            try:
                client.loglikelihood([PROBE])
                names[client.base_url] = client.model_facts()["name"]
            except BackendUnsuitable as error:
                raise BackendUnsuitable(f"{client.base_url}: {error}") from None
            except ModelServerError as error:
                down.append(f"{client.base_url} ({error})")
        if not names:
            raise ModelServerError("no model server answered: " + "; ".join(down))
        if len(set(names.values())) > 1:
            raise BackendUnsuitable("the servers serve different models: "
                                    + ", ".join(f"{url} {name}" for url, name in names.items()))
        self.clients.sort(key=lambda client: client.base_url not in names)  # those that answered first
        self.spread, self.at = len(names), 0
        # The model's chat template, rendered here as the web tier renders it (livescoring.remote).
        self.loaded.tokenizer = ChatTemplate(self._ask(lambda client: client.tokenizer_info()))
        return down


def open_servers(urls: Sequence[str]) -> tuple[ServerSet, str]:
    """The servers at ``urls``, checked (ServerSet.check; a key in MODEL_SERVER_API_KEY is sent), and
    a line naming their model; a server that gives no answer is named in a warning."""
    servers = ServerSet(urls, os.environ.get("MODEL_SERVER_API_KEY") or None)
    for down in servers.check():
        print(f"warning: no answer from {down}; the run goes on without it", file=sys.stderr)
    return servers, f"{servers.model_facts()['name']} on the model server(s) {' '.join(servers.urls)}"
