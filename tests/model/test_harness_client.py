"""lm-evaluation-harness's own OpenAI-API client, pointed at the model server, gives the harness's own answers.

tests/fixtures/harness_reference/ holds lm_eval 0.4.13's per-question logs with ``--model hf`` (the
float32 model read whole by transformers; tools/harness_reference.py says how they were made). Here
the same tool runs the same tasks through ``--model local-completions`` (``base_url`` the project's
model server, ``max_length`` its context length, the tokenizer the server's own ``/tokenize``), in
lm_eval's environment of its own (tests/run.sh makes it: HARNESS_VENV). Per question: the same
prompt, every option's log-likelihood within the suite's harness tolerance, the same greedy flags
and ``acc``; the generative task's text and filtered answer exactly the same.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow,  # slow: lm_eval's own process, about a minute
              # one worker runs both settings: the module fixture runs lm_eval once, not once a worker
              pytest.mark.xdist_group("model_server")]

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "harness_reference"
LOGLIKELIHOOD_TOLERANCE = 5e-4  # as tests/model/test_harness_equality.py: float32 sums differ by CPU


def harness_python() -> Path:
    venv = Path(os.environ.get("HARNESS_VENV", Path.home() / ".cache" / "annotated-papers" / "lm-eval-0.4.13"))
    python = venv / "bin" / "python"
    if not python.exists():
        message = f"lm_eval's environment is missing ({venv}); tests/run.sh makes it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return python


# The first two test questions of each subject (the references have four at 0 shots, three at 5): every
# request lm_eval sends (letter and option log-likelihoods, generations) at both shot counts, and at 5
# shots a subject's first question reads its worked examples cold and its second from the server's prefix
# cache. A third and fourth question sent the same requests again, at about 12 s of the suite's time each.
QUESTIONS = 2


@pytest.fixture(scope="module")
def through_the_server(model_server, tmp_path_factory) -> dict:
    """lm_eval through the model server at 0 and 5 shots, in one process (its start costs seconds):
    each setting's log, over the first QUESTIONS test questions of each subject."""
    out = tmp_path_factory.mktemp("harness-client")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(REPO),
           "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([str(harness_python()), "-m", "tools.harness_reference", "--model-server", model_server,
                           "--out", str(out), "--shots", "0", "5", "--sides", "plain", "--questions", str(QUESTIONS)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return {shots: json.loads((out / f"{shots}shot-plain.json").read_text()) for shots in (0, 5)}


@pytest.mark.parametrize("shots", [0, 5])
def test_the_harness_client_through_the_model_server_gives_the_harness_answers(through_the_server, shots):
    reference = json.loads((FIXTURES / f"{shots}shot-plain.json").read_text())
    ours = through_the_server[shots]
    assert ours["model"] == "local-completions" and "tokenizer_backend=remote" in ours["model_args"]
    compared, largest = 0, 0.0
    for method, samples in reference["samples"].items():
        got = {(s["subject"], s["index"]): s for s in ours["samples"][method]}
        assert sorted(got) == sorted((s["subject"], s["index"]) for s in samples if s["index"] < QUESTIONS)
        for theirs in (s for s in samples if s["index"] < QUESTIONS):
            mine = got[(theirs["subject"], theirs["index"])]
            assert mine["prompt"] == theirs["prompt"]
            if method == "generative":
                assert (mine["resps"], mine["filtered_resps"], mine["exact_match"]) == \
                    (theirs["resps"], theirs["filtered_resps"], theirs["exact_match"])
            else:
                for (m,), (t,) in zip(mine["resps"], theirs["resps"], strict=True):
                    largest = max(largest, abs(m[0] - t[0]))
                    assert m[1] == t[1], (method, mine["subject"], mine["index"])  # greedy, by the client's own test
                assert mine["acc"] == theirs["acc"]
            compared += 1
    assert compared == len(reference["samples"]) * len(ours["subjects"]) * QUESTIONS
    assert largest <= LOGLIKELIHOOD_TOLERANCE, largest
    print(f"{shots} shots: {compared} questions, max |d logprob| {largest:.2e}", file=sys.stderr)
