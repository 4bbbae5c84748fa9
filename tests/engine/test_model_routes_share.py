"""Issue 26: every route that scores on the model is cancelled when its client leaves and shares the
queue fairly per client: each passes the reader's address (``client``) and waitress's
``waitress.client_disconnected`` (``gone``) to the model's queue, which stops the work of a reader
who left (tests/service/test_generate.py and tests/service/test_scoring_queue.py test the queue itself; the
generation routes are tested in tests/engine/test_hostile.py)."""
from __future__ import annotations

import json
import logging

import pytest

from engine import create_app
from engine.security import client_key
from livescoring.worker import Preempted, QueueFull
from tests.conftest import run_form_token


class Recording:
    """Stands in for the model queue's ``loglikelihood``: records what a route asks of it, then says the queue is full."""

    def __init__(self):
        self.calls = []

    def __call__(self, requests, **kwargs):
        self.calls.append(kwargs)
        raise QueueFull(7)


def gone() -> bool:
    return False


@pytest.fixture()
def app(monkeypatch):
    app = create_app({"TESTING": True})
    scoring = app.extensions["scoring"]  # the real service otherwise (its state, its page)
    scoring.loglikelihood = Recording()
    # The prompt is fitted before it is queued; a prompt of one token fits without loading the model.
    scoring.token_count = lambda context, continuations=(): 1
    monkeypatch.setattr(type(scoring), "context_length", 2048)
    return app


def routes(client):
    """(what, send) for each scoring route: the JSON APIs and the forms without JavaScript."""
    # On the client itself: its form tokens are for its address.
    client.environ_base.update({"waitress.client_disconnected": gone, "REMOTE_ADDR": "192.0.2.9"})
    mmlu_form = {"subject": "astronomy", "source": "real", "split": "test", "number": "1", "shots": "0",
                 "method": "letter"}
    pro_form = {"category": "history", "number": "1", "shots": "0"}
    return [
        ("/api/score", lambda: client.post("/api/score", json={"subject": "astronomy", "index": 0, "shots": 0})),
        ("/mmlu/run", lambda: client.post("/mmlu/run", data={**mmlu_form, **run_form_token(client)})),
        ("/api/mmlu-pro/score", lambda: client.post("/api/mmlu-pro/score", json={"category": "history", "index": 0,
                                                                                 "shots": 0})),
        ("/mmlu-pro/run", lambda: client.post("/mmlu-pro/run", data={**pro_form, **run_form_token(
            client, "/mmlu-pro/run?category=history&number=1")})),
    ]


def test_every_scoring_route_passes_its_client_and_whether_it_left(app):
    client = app.test_client()
    recording = app.extensions["scoring"].loglikelihood
    for what, send in routes(client):
        recording.calls.clear()
        response = send()
        assert response.status_code == 429 and response.headers["Retry-After"] == "7", what
        (call,) = recording.calls
        assert call["client"] == "192.0.2.9", (what, call["client"])
        assert call["gone"] is gone, what


@pytest.mark.parametrize(("address", "key"), [
    ("192.0.2.9", "192.0.2.9"),  # IPv4: each address its own client, as before
    ("2001:db8:1:2::5", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff:ffff:ffff:fffe", "2001:db8:1:2::/64"),  # another address of the same /64
    ("2001:DB8:1:2::5", "2001:db8:1:2::/64"),  # however it is spelled
    ("2001:db8:1:3::5", "2001:db8:1:3::/64"),  # the next /64 is another client
    ("::ffff:192.0.2.9", "192.0.2.9"),  # an IPv4 client on a dual-stack socket
    ("fe80::1%eth0", "fe80::/64"),
])
def test_the_client_key_groups_ipv6_by_64_and_keeps_ipv4_per_address(address, key):
    assert client_key(address) == key


def test_every_scoring_route_shares_an_ipv6_64_between_its_addresses(app):
    """Issue 41, item 3: a host handed a /64 could take a fresh address for every request, each with
    a share of its own. Every address in one /64 is now one client; the next /64 is another."""
    recording = app.extensions["scoring"].loglikelihood
    keys = {}
    for address in ("2001:db8:1:2::5", "2001:db8:1:2:ab:cd:ef:1", "2001:db8:1:3::5"):
        client = app.test_client()
        for what, send in routes(client):
            client.environ_base["REMOTE_ADDR"] = address
            recording.calls.clear()
            assert send().status_code == 429, what
            keys.setdefault(address, set()).add(recording.calls[0]["client"])
    assert keys == {"2001:db8:1:2::5": {"2001:db8:1:2::/64"}, "2001:db8:1:2:ab:cd:ef:1": {"2001:db8:1:2::/64"},
                    "2001:db8:1:3::5": {"2001:db8:1:3::/64"}}


def test_a_stream_stopped_to_let_another_reader_in_ends_with_a_line_saying_so(app, caplog):
    """Issue 41, item 3: the chain of thought's last line, when a waiting reader stopped it, says why
    in words (the page shows them after "stopped because"), and how long to wait; the log gets a
    line, not a traceback (an attack makes many)."""
    def preempted(request, **requester):
        yield {"reading": {"prompt_tokens": 9, "cached_tokens": 0}}
        yield {"text": " The", "tokens": 1}
        raise Preempted(40)
    app.extensions["scoring"].generate_until = preempted
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = "2001:db8:1:2::5"
    response = client.post("/api/mmlu-pro/generate", json={"category": "history", "index": 0, "shots": 0,
                                                            "max_tokens": 8})
    assert response.status_code == 200
    last = json.loads(response.get_data(as_text=True).splitlines()[-1])
    assert last["error"].startswith("Generation stopped: Another reader was waiting for the model")
    assert last["stopped"] == ("another reader was waiting for the model and this answer had been writing longest, "
                               "so it made way for them; ask again in about 40 s")
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
