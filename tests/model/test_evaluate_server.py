"""``evaluate --server`` and ``conformance``: the batch command on model servers (benchmarks/server/servers.py).

With the real model (the `model_server` fixture, one server per run):

* ``python -m engine mmlu evaluate --server DEAD LIVE`` gives the in-process run's rows (same
  predictions, every probability within 1e-5) at 0 and 1 shots, and in the chat template, one
  server being a closed port;
* a run whose servers all stop answering saves its rows, says how to continue, and ``--resume``
  completes it with the same rows;
* ``python -m engine mmlu conformance`` against a published run: every prediction agrees.

Without the model, on fake servers made here with the standard library's http.server:

* a server that gives log-probabilities only for the tokens it writes (as llama.cpp's server does)
  is refused by evaluate and by conformance (exit 2, the missing part named, no traceback);
* a server that stops mid-run loses no row: its calls are retried on the other server, and every
  batch carries a prefix key shared by its subject's batches.
"""
from __future__ import annotations

import re
import socket

import pytest

from benchmarks.mmlu.server.evaluate import MMLUTask
from benchmarks.runfile import question_key
from benchmarks.server import evaluate as shared
from benchmarks.server import servers as servers_module
from benchmarks.server.runfile import read_rows
from engine.__main__ import main as cli_main
from fake_model_server import FakeServer
from livescoring.client import ModelClient, ModelServerError

TOLERANCE = 1e-5
SUBJECTS = ["astronomy", "virology"]
LIMIT = 3
SETTINGS = [(0, "plain"), (1, "plain"), (1, "chat")]  # shots, template (chat: the model's, rendered by the client)


def closed_port_url() -> str:
    """A loopback address nothing listens on: a server that is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def evaluate_words(out, shots: int, *servers: str) -> list[str]:
    return ["mmlu", "evaluate", "--subjects", *SUBJECTS, "--limit", str(LIMIT), "--shots", str(shots), "--out",
            str(out), "--no-progress", "--workers", "2", "--batch-size", "2", "--server", *servers]


def assert_same_rows(got: list[dict], expected: list[dict]) -> None:
    mine, theirs = {question_key(r): r for r in got}, {question_key(r): r for r in expected}
    assert mine.keys() == theirs.keys() and len(got) == len(mine) == len(SUBJECTS) * LIMIT
    for key, row in theirs.items():
        other = mine[key]
        numbers = ("probabilities", "confidence", "vocabulary_share")
        assert {k: v for k, v in other.items() if k not in numbers} == {k: v for k, v in row.items() if k not in numbers}
        assert other["probabilities"] == pytest.approx(row["probabilities"], abs=TOLERANCE)


@pytest.fixture(scope="module")
def in_process_rows(loaded_model, mmlu_data):
    """The in-process run's rows at 0 and 1 shots (one worker, the batches the command makes)."""
    from livescoring.scorer import Scorer

    return {(shots, template): shared.evaluate(MMLUTask(mmlu_data), Scorer(loaded_model, batch_rows=2), SUBJECTS,
                                               shots=shots, limit=LIMIT, progress=False, batch_size=2, template=template)
            for shots, template in SETTINGS}


@pytest.mark.parametrize(("shots", "template"), SETTINGS)
@pytest.mark.model
@pytest.mark.slow  # the model server process (about 5 s to start) and the model in this process
@pytest.mark.xdist_group("model_server")
def test_evaluate_on_servers_gives_the_in_process_rows_with_one_server_down(model_server, in_process_rows, shots,
                                                                            template, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    chat = ["--apply-chat-template"] if template == "chat" else []
    assert cli_main(evaluate_words(out, shots, closed_port_url(), model_server) + chat) == 0
    assert "warning: no answer from http://127.0.0.1:" in capsys.readouterr().err
    assert_same_rows(read_rows(out), in_process_rows[shots, template])


@pytest.mark.model
@pytest.mark.slow  # the model server process and the model in this process
@pytest.mark.xdist_group("model_server")
def test_a_run_whose_servers_stop_is_saved_and_resumes(model_server, in_process_rows, tmp_path, capsys, monkeypatch):
    out = tmp_path / "run.jsonl"
    calls, real = [], ModelClient.loglikelihood

    def stops_after_two_batches(self, requests, stop=None, prefix_key="", after_context=False):
        calls.append(len(requests))
        if len(calls) > 3:  # the check's probe and two batches answer; then no server answers
            raise ModelServerError("no answer from the model server (a test)")
        return real(self, requests, stop, prefix_key, after_context)

    monkeypatch.setattr(servers_module, "ROUND_PAUSE_S", 0)
    with monkeypatch.context() as patched:
        patched.setattr(ModelClient, "loglikelihood", stops_after_two_batches)
        assert cli_main(evaluate_words(out, 0, model_server)) == 3
    err = capsys.readouterr().err
    kept = read_rows(out)
    assert "no model server answered" in err and f"{out} holds {len(kept)} complete rows" in err
    assert 0 < len(kept) < len(SUBJECTS) * LIMIT
    command = re.search(r"Continue with:\n  (.*)", err).group(1)
    assert f"--server {model_server} " in command and command.endswith(" --resume")
    assert cli_main(command.split()[3:]) == 0
    resumed = read_rows(out)
    assert resumed[:len(kept)] == kept
    assert_same_rows(resumed, in_process_rows[0, "plain"])


@pytest.mark.model
@pytest.mark.slow  # the model server process, and the published run read whole
@pytest.mark.xdist_group("model_server")
@pytest.mark.parametrize("benchmark, run", [("mmlu", "smollm2-135m-instruct-0shot"),
                                            ("mmlu-pro", "smollm2-0shot-first100")])
def test_conformance_of_our_server_against_a_published_run(model_server, capsys, benchmark, run):
    assert cli_main([benchmark, "conformance", "--server", model_server, "--run", run,
                     "--questions", "3", "--no-progress", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "Prediction agreement: 3/3 (100.0%)" in out and "Conforms" in out
    assert float(re.search(r"Max \|dp\| .*: (\S+)", out).group(1)) <= TOLERANCE


# -- fake servers, without the model ----------------------------------------------------------------

@pytest.fixture
def fake_servers():
    made = []

    def make(**options) -> FakeServer:
        made.append(FakeServer(**options))
        return made[-1]

    yield make
    for server in made:
        if server.socket.fileno() != -1:
            server.stop()


@pytest.mark.parametrize("command", ["evaluate", "conformance"])
def test_a_server_without_prompt_logprobs_is_refused(fake_servers, command, tmp_path, capsys):
    url = fake_servers(echo=False).url
    words = (evaluate_words(tmp_path / "run.jsonl", 0, url) if command == "evaluate" else
             ["mmlu", "conformance", "--server", url, "--run", "smollm2-135m-instruct-0shot"])
    assert cli_main(words) == 2
    err = capsys.readouterr().err
    assert f"error: {url}: the server does not give prompt log-probabilities aligned with the tokens sent" in err
    assert "got 1)" in err and "Traceback" not in err and not (tmp_path / "run.jsonl").exists()


def test_a_server_that_stops_mid_run_loses_no_row(fake_servers, mmlu_data, monkeypatch):
    monkeypatch.setattr(servers_module, "ROUND_PAUSE_S", 0)
    dying, staying = fake_servers(dies_after=1), fake_servers()  # the first asks for the probe alone
    servers = servers_module.ServerSet([dying.url, staying.url])
    assert servers.check() == []
    rows = shared.evaluate(MMLUTask(mmlu_data), servers, SUBJECTS, shots=1, limit=3, progress=False, batch_size=1,
                           workers=2)
    assert sorted(question_key(r) for r in rows) == [(s, "test", i) for s in SUBJECTS for i in range(3)]
    # The first worker's first batch went to the first server, which dropped it; the other answered it.
    assert dying.completions == 2 and staying.completions == 1 + 6
    # Each batch carries its subject's key (the probe, asked by check(), none).
    assert dying.keys[0] is None and staying.keys[0] is None
    keys = dying.keys[1:] + staying.keys[1:]
    assert len(keys) == 7 and all(keys) and len(set(keys)) == len(SUBJECTS)
