"""Where a warm live question's time goes (issue 36: through the model server, against in-process).

    python3 bench/warm_question.py [--questions 30]

Two parts, in one run. First the questions through a model server of this checkout (``python -m
livescoring serve``, started by tools/launcher.py) and the site's own client and scorer
(livescoring/remote.py), every HTTP call the client makes timed by its route. Then the computation
alone, in this process with the model loaded once (two torch threads, MKL's reproducible products as
the model server asks for them): the in-process scorer answering a question's letters, against the
model server's prompt reader reading the same prompt (``values=False``: the distribution after it, as
the site asks), and how much of that read went to gathering the cached prefix's blocks into one
buffer. Each at 0 and 5 shots, astronomy's test questions, after five unmeasured ones (the prefix
cached, the model warm).
"""
from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import hardware, running_model_server  # noqa: E402

SUBJECT = "astronomy"
WARM = range(100, 105)  # asked first, unmeasured: past the measured ones, so none is asked twice


def p50(values) -> str:
    return f"{statistics.median(values):.1f} ms"


def timed(ask, questions) -> list[float]:
    spent = []
    for question in questions:
        started = time.perf_counter()
        ask(question)
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def computation(data, questions) -> None:
    import torch

    from benchmarks.mmlu import prompt
    from benchmarks.server.multiple_choice import answer_question
    from livescoring import prompt_reader
    from livescoring.model import ModelSettings, load
    from livescoring.scorer import Scorer

    loaded = load(ModelSettings(threads=2, cache_dir=Path.home() / ".cache" / "annotated-papers"))
    torch.set_num_threads(2)
    scorer, reader = Scorer(loaded), prompt_reader.PromptReader(loaded)
    gathering = []
    append = prompt_reader.KeysValues.append

    def timed_append(self, layers):
        started = time.perf_counter()
        append(self, layers)
        gathering[-1] += (time.perf_counter() - started) * 1000

    prompt_reader.KeysValues.append = timed_append
    try:
        for shots in (0, 5):
            worked = data.questions(SUBJECT, "dev")[:shots]

            def in_process(q, worked=worked):
                answer_question(scorer, prompt_format=prompt, subject=SUBJECT, question=q.question,
                                choices=q.choices, shots=worked, key=q.answer)

            def read(q, worked=worked):
                gathering.append(0.0)
                reader.read(scorer.encode(prompt.build_prompt(SUBJECT, q.question, q.choices, worked)), values=False)

            for ask in (in_process, read):
                timed(ask, [data.questions(SUBJECT, "test")[i] for i in WARM])
            gathering.clear()
            print(f"{shots}-shot, computed in this process: in-process scorer {p50(timed(in_process, questions))}, "
                  f"the model server's prompt reader {p50(timed(read, questions))} "
                  f"(of which gathering the cached blocks {p50(gathering)})")
    finally:
        prompt_reader.KeysValues.append = append


def through_the_server(data, questions) -> None:
    from benchmarks.mmlu import prompt
    from benchmarks.server.multiple_choice import answer_question
    from livescoring.client import ModelClient
    from livescoring.remote import RemoteModel

    with running_model_server(timeout=300) as server:
        client = ModelClient(server.url)
        calls = collections.defaultdict(list)
        call = client._call

        def timed_call(path, *args):
            started = time.perf_counter()
            try:
                return call(path, *args)
            finally:
                calls[path].append((time.perf_counter() - started) * 1000)

        client._call = timed_call
        remote = RemoteModel(client)
        print(f"the site's tokenisation: {'here, from the server tokenizer file' if client.local_tokenizer() else '/tokenize'}")
        for shots in (0, 5):
            worked = data.questions(SUBJECT, "dev")[:shots]

            def ask(q, worked=worked):
                answer_question(remote, prompt_format=prompt, subject=SUBJECT, question=q.question,
                                choices=q.choices, shots=worked, key=q.answer)
            timed(ask, [data.questions(SUBJECT, "test")[i] for i in WARM])
            calls.clear()
            spent = timed(ask, questions)
            routes = "; ".join(f"{path} {len(ms) / len(questions):.1f} a question, p50 {p50(ms)}"
                               for path, ms in calls.items())
            print(f"{shots}-shot through the model server: {p50(spent)} a question ({routes})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    from livescoring.core_share import products_reproducible_across_threads

    products_reproducible_across_threads()  # before torch's first product, as the model server does
    from benchmarks.mmlu.server import data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from engine.config import default_config

    data = MMLUData(data_dir(default_config()))
    questions = data.questions(SUBJECT, "test")[:args.questions]
    print(f"hardware: {hardware()}")
    through_the_server(data, questions)
    computation(data, questions)


if __name__ == "__main__":
    main()
