"""llama-cpp-python's OpenAI-compatible server beside this project's model: a one-off measurement (issue 36).

Build the other server from source in a virtual environment of its own, outside the repository, and
start it through bench/llama_cpp_serve.py (its ``python -m llama_cpp.server`` with weight repacking
off: on an AMX CPU the server as shipped dies in its first decode; that file says why):

    python3 -m venv /tmp/llamacpp-venv && /tmp/llamacpp-venv/bin/pip install 'llama-cpp-python[server]==0.3.36'
    /tmp/llamacpp-venv/bin/python bench/llama_cpp_serve.py --model "$(python3 -c \\
        'from livescoring.model import packaged_gguf; print(packaged_gguf())')" --logits_all true \\
        --n_ctx 8192 --n_threads 1 --n_threads_batch 1 --host 127.0.0.1 --port 8031
    python3 bench/conformance_llama_cpp.py --url http://127.0.0.1:8031 --questions 100 --five-shot 20

It prints, with the hardware named:

1. what this project's ModelClient says to that server: it refuses it, and which part is missing;
2. the wire: lm-evaluation-harness's local-completions echo request of token ids, ``/tokenize`` and
   ``/v1/models``, as that server answers them;
3. alignment: that server's echo values for a text prompt against the float32 model's
   log p(token i | tokens before i) (what scoring needs) and against log p(next token = token i |
   tokens up to i) (the same distribution's value one place later);
4. tokenisation: llama.cpp's tokens for every prompt against the model's own (Hugging Face) tokenizer's;
5. the letter method, read from the one log-probability that server does give aligned (a
   written token's: each letter written by force with ``logit_bias``, its value read back),
   against the in-process float32 Scorer: prediction agreement, max |d logprob| of a letter, max |dp|
   of the letter probabilities, and the wall time per question of each (one thread each).

Only the letter method can be read that way (each continuation one token); a full-option score needs
the log-probabilities of prompt tokens, which that server gives misaligned (item 3).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import hardware  # noqa: E402
from benchmarks.mmlu import prompt  # noqa: E402
from benchmarks.mmlu.server import data_dir  # noqa: E402
from benchmarks.mmlu.server.reader import MMLUData  # noqa: E402
from benchmarks.server.multiple_choice import answer_question  # noqa: E402
from engine.config import default_config  # noqa: E402
from livescoring.client import ModelClient, ModelServerError  # noqa: E402
from livescoring.model import ModelSettings, load  # noqa: E402
from livescoring.scorer import Loglikelihood, LoglikelihoodAnswer, Scorer  # noqa: E402

# A continuation's one token is written by force (this bias on its id) and its value read back: that server
# computes the values it reports from the model's logits before sampling, so the bias moves none of them (checked
# by hand: the value read so equals the one in the unbiased top_logprobs, digit for digit).
FORCE = 100


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=600) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


class NextTokenReader:
    """The narrow interface (token_count, context_length, loglikelihood) over llama-cpp-python's server
    for continuations of one token, each read as a completion's one written token, forced with
    ``logit_bias``: the value of a written token is the one that server gives aligned (the distribution
    after the whole prompt). Its prefix cache reuses the prompt's keys and values for the next letter."""

    def __init__(self, url: str, context_length: int):
        self.url, self.context_length = url.rstrip("/"), context_length

    def encode(self, text: str) -> list[int]:
        status, answer = post(self.url + "/extras/tokenize", {"input": text})
        assert status == 200, answer
        return answer["tokens"]

    def token_count(self, context: str, continuations=()) -> int:
        return len(self.encode(context)) + max((len(self.encode(context + c)) - len(self.encode(context))
                                                for c in continuations), default=0)

    def model_facts(self) -> dict:
        return {"name": "llama-cpp-python", "device": "cpu", "dtype": "Q4_1", "threads": 1,
                "context_length": self.context_length}

    def loglikelihood(self, requests, stop=None) -> list[LoglikelihoodAnswer]:
        answers = []
        for request in requests:
            context = self.encode(request.context)
            (token, *more) = self.encode(request.context + request.continuation)[len(context):]
            if more:
                raise ValueError(f"{request.continuation!r} is more than one token")
            status, answer = post(self.url + "/v1/completions", {
                "prompt": request.context, "max_tokens": 1, "logprobs": 1, "temperature": 0,
                "logit_bias": {str(token): FORCE}})
            assert status == 200, answer
            written = answer["choices"][0]["logprobs"]
            assert written["tokens"] == [request.continuation], written["tokens"]
            value, top = written["token_logprobs"][0], written["top_logprobs"][0]
            answers.append(LoglikelihoodAnswer(value, value >= max(top.values()), (value,), len(context), ()))
        return answers


def question(data: MMLUData, subject: str, index: int, shots: int) -> dict:
    q = data.question(subject, "test", index)
    return {"prompt_format": prompt, "subject": subject, "question": q.question, "choices": q.choices,
            "shots": data.questions(subject, "dev")[:shots], "method": "letter", "key": q.answer}


def picked(data: MMLUData, n: int) -> list[tuple[str, int]]:
    """n questions spread over the subjects: the first of every subject, then the second, ..."""
    subjects = sorted(data.subjects)
    return [(subjects[i % len(subjects)], i // len(subjects)) for i in range(n)]


def client_refusal(url: str) -> str:
    try:
        ModelClient(url).loglikelihood([Loglikelihood("The answer is", " yes")])
    except ModelServerError as error:
        return f"{type(error).__name__}: {error}"
    return "accepted (no refusal)"


def wire(url: str, loaded) -> None:
    ids = loaded.tokenizer("The capital of France is Paris", add_special_tokens=False)["input_ids"]
    status, answer = post(url + "/v1/completions", {"prompt": [ids], "echo": True, "logprobs": 1,
                                                    "max_tokens": 1, "temperature": 0})
    print(f"  echo of token ids (local-completions' shape): {status} {json.dumps(answer)[:300]}")
    for path, body in (("/tokenize", {"prompt": "Paris"}), ("/extras/tokenize", {"input": "Paris"})):
        status, answer = post(url + path, body)
        print(f"  POST {path}: {status} {json.dumps(answer)[:160]}")
    status, answer = get(url + "/v1/models")
    print(f"  GET /v1/models: {status} {json.dumps(answer)[:300]}")


def alignment(url: str, loaded, text: str) -> None:
    import torch

    ids = loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
    status, answer = post(url + "/v1/completions", {"prompt": text, "echo": True, "logprobs": 1, "max_tokens": 1,
                                                    "temperature": 0})
    assert status == 200, answer
    values = answer["choices"][0]["logprobs"]["token_logprobs"]
    with torch.no_grad():
        logp = torch.log_softmax(loaded.model(torch.tensor([ids])).logits[0].double(), -1)
    needed = [logp[i - 1, ids[i]].item() for i in range(1, len(ids))]  # log p(token i | tokens before i)
    one_later = [logp[i, ids[i]].item() for i in range(1, len(ids))]  # log p(next = token i | tokens up to i)
    given = values[1:len(ids)]
    print(f"  {len(ids)} prompt tokens + 1 written: {len(values)} values (the first null: {values[0] is None}); "
          f"an aligned server gives {len(ids) + 1}")
    for name, reference in (("log p(token i | before i), what scoring needs", needed),
                            ("log p(next = token i | up to i), one place later", one_later)):
        print(f"  max |value - {name}| = {max(abs(g - r) for g, r in zip(given, reference, strict=True)):.4f}")
    print("  first five: server " + ", ".join(f"{v:.3f}" for v in given[:5]) + " | needed "
          + ", ".join(f"{v:.3f}" for v in needed[:5]) + " | one later " + ", ".join(f"{v:.3f}" for v in one_later[:5]))


def tokenisation(reader: NextTokenReader, loaded, texts: list[str]) -> None:
    differ = []
    for text in texts:
        mine = loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
        theirs = reader.encode(text)
        if mine != theirs:
            differ.append((text, mine, theirs))
    print(f"  {len(texts) - len(differ)} of {len(texts)} prompts tokenised identically by llama.cpp and the HF tokenizer")
    for _, mine, theirs in differ[:3]:
        at = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b), min(len(mine), len(theirs)))
        print(f"    differs at token {at}: HF {mine[at:at + 4]} {loaded.tokenizer.decode(mine[at:at + 4])!r} | "
              f"llama.cpp {theirs[at:at + 4]} {loaded.tokenizer.decode(theirs[at:at + 4])!r}")


def compare(reader: NextTokenReader, scorer: Scorer, data: MMLUData, n: int, shots: int) -> None:
    differences, apart = [], []
    max_dp, worst = 0.0, None
    ours_s = theirs_s = 0.0
    for subject, index in picked(data, n):
        q = question(data, subject, index, shots)
        started = time.perf_counter()
        expected = answer_question(scorer, **q)
        ours_s += time.perf_counter() - started
        started = time.perf_counter()
        got = answer_question(reader, **q)
        theirs_s += time.perf_counter() - started
        if got["prediction"] != expected["prediction"]:
            apart.append((subject, index, expected, got))
        differences += [abs(mine["logprob"] - theirs["logprob"])
                        for mine, theirs in zip(expected["options"], got["options"], strict=True)]
        dp = max(abs(expected["probabilities"][k] - got["probabilities"][k]) for k in expected["probabilities"])
        if dp > max_dp:
            max_dp, worst = dp, (subject, index)
    differences.sort()
    print(f"  {shots}-shot, {n} questions: same prediction {n - len(apart)}/{n}; |d logprob| of a letter: median "
          f"{differences[len(differences) // 2]:.4f}, max {differences[-1]:.4f}; max |dp| {max_dp:.4f} ({worst[0]} #{worst[1]})")
    for subject, index, expected, got in apart:
        print(f"    apart: {subject} #{index}: float32 " + " ".join(f"{k} {v:.3f}" for k, v in expected["probabilities"].items())
              + " | llama.cpp " + " ".join(f"{k} {v:.3f}" for k, v in got["probabilities"].items()))
    print(f"  wall time a question: in-process float32 Scorer {ours_s / n * 1000:.0f} ms, "
          f"llama-cpp-python over HTTP (one request a letter) {theirs_s / n * 1000:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8031")
    parser.add_argument("--n-ctx", type=int, default=8192, help="the --n_ctx the other server was started with")
    parser.add_argument("--questions", type=int, default=100, help="0-shot questions")
    parser.add_argument("--five-shot", type=int, default=20, help="5-shot questions")
    args = parser.parse_args()
    print(hardware())
    loaded = load(ModelSettings.from_config({**default_config(), "SCORER_DEVICE": "cpu", "SCORER_THREADS": 1}))
    scorer, data = Scorer(loaded), MMLUData(data_dir(default_config()))
    reader = NextTokenReader(args.url, args.n_ctx)
    print("1. ModelClient against it:", client_refusal(args.url))
    print("2. The wire:")
    wire(args.url, loaded)
    texts = ["".join(p.text for p in prompt.prompt_parts(**{k: question(data, s, i, shots)[k] for k in
                                                            ("subject", "question", "choices", "shots")}))
             for shots, n in ((0, args.questions), (5, args.five_shot)) for s, i in picked(data, n)]
    print("3. Alignment of echo's prompt values (the first 0-shot prompt):")
    alignment(args.url, loaded, texts[0])
    print("4. Tokenisation:")
    tokenisation(reader, loaded, texts)
    print("5. The letter method from the next-token distribution:")
    compare(reader, scorer, data, args.questions, 0)
    if args.five_shot:
        compare(reader, scorer, data, args.five_shot, 5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
