"""What reading a chain of thought's prompt ahead saves (issue 40), measured at the model server.

    python3 bench/read_ahead.py                  # three MMLU-Pro categories, 5 worked examples
    python3 bench/read_ahead.py --threads 2

Against one model server (``python -m livescoring serve``, started fresh: its prefix cache empty),
with no site in between (the site abandons a stream that is silent for 60 s, which a cold
2,000-token prompt on a busy 2-core machine can be), it times the first written token of the
paper's 5-shot chain-of-thought prompt of the first test question of three categories, each read
in one of three ways:

* cold: nothing read before (what the question browser met after a letter score until issue 40,
  the letter prompt sharing nothing with this one);
* after a finished read-ahead: the prompt read ahead to its end first (``RemoteModel.read_ahead``,
  what the site starts after a letter score), as when the reader looks at the letters' result for
  longer than the read takes;
* during a read-ahead: the reader's request sent at once after the read-ahead's, the two sharing the
  prompt's passes (prompt_reader.py takes a block the other has just read).

Each line gives the seconds to the first token and how many of the prompt's tokens the server's cache
held when the request began (its usage's ``cached_tokens``).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import hardware  # noqa: E402

from benchmarks.mmlu_pro import prompt  # noqa: E402
from benchmarks.mmlu_pro.server.reader import MMLUProData  # noqa: E402
from livescoring.client import ModelClient  # noqa: E402
from livescoring.remote import RemoteModel  # noqa: E402
from tools.launcher import running_model_server  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "mmlu-pro"


def first_token(client: ModelClient, ids: list[int]) -> tuple[float, int]:
    """Seconds to the first chunk with text, and the prompt tokens the cache held."""
    started = time.perf_counter()
    cached = 0
    chunks = client.stream_completion(ids, 8, ())
    try:
        for chunk in chunks:
            usage = chunk.get("usage") or {}
            cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or cached
            if (chunk.get("choices") or [{}])[0].get("text"):
                break
    finally:
        chunks.close()
    return time.perf_counter() - started, cached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--categories", nargs=3, default=["philosophy", "economics", "psychology"])
    parser.add_argument("--shots", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    data = MMLUProData(DATA)
    print(f"hardware: {hardware()}; load average {os.getloadavg()[0]:.1f}; model server with {args.threads} torch thread(s)")
    with running_model_server(args=("--threads", str(args.threads)), timeout=600) as server:
        client = ModelClient(server.url, timeout_s=1200)
        model = RemoteModel(client)
        for way, category in zip(("cold", "after a finished read-ahead", "during a read-ahead"), args.categories,
                                 strict=True):
            q = data.in_category(category, "test")[0]
            parts = prompt.cot_prompt_parts(q.category, q.question, q.options, data.shots(q.category, args.shots))
            text = "".join(part.text for part in parts)
            ids = client.encode(text)
            ahead = None
            if way == "after a finished read-ahead":
                read_started = time.perf_counter()
                model.read_ahead(text)
                print(f"  {category}: the read-ahead itself took {time.perf_counter() - read_started:.1f} s")
            elif way == "during a read-ahead":
                ahead = threading.Thread(target=model.read_ahead, args=(text,))
                ahead.start()
                time.sleep(0.2)  # the read-ahead's request first, as the site sends it
            seconds, cached = first_token(client, ids)
            if ahead:
                ahead.join()
            print(f"{category} ({way}): first token after {seconds:.1f} s; prompt {len(ids):,} tokens, "
                  f"{cached:,} of them cached; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
