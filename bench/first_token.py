"""The first chain-of-thought token of MMLU-Pro's question browser, cold and warm (issue 24).

    python3 bench/first_token.py                         # history questions 1-4, 5 worked examples
    python3 bench/first_token.py --category law --questions 3 --shots 5

Against the production server (python3 app.py, the model loaded at start, SCORER_THREADS as
configured), asks POST /api/mmlu-pro/generate for one question after another of one category and
prints, for each, the seconds from the request to its "reading" line (the page's "Reading the worked
examples…") and to its first written token, with the prompt's tokens and how many of them were
already cached. The first question reads the category's worked examples (cold); the next ones reuse
them from the scorer's prefix cache (warm), which is what the question browser's reader meets after
the first question of a category. Each generation writes 8 tokens, then the stream is closed.

With ``--after-letter CATEGORY`` (issue 40) it then does what a reader of the question browser does on a
category not yet read: each question's option letters scored first (POST /api/mmlu-pro/score, timed),
then, ``--pause`` seconds later (the reader reading the letters' result), its chain of thought, whose
first token is timed as above. The letter score starts reading the chain of thought's prompt ahead
(benchmarks/server/live.py read_ahead), so this is what the read-ahead saves.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import hardware, running_server  # noqa: E402


def first_token(port: int, category: str, index: int, shots: int) -> dict:
    """Seconds to the reading line and to the first text line of one generation, and its token counts."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    body = {"category": category, "index": index, "shots": shots, "max_tokens": 8}
    connection.request("POST", "/api/mmlu-pro/generate", body=json.dumps(body),
                       headers={"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"})
    response = connection.getresponse()
    assert response.status == 200, (response.status, response.read()[:300])
    seen: dict = {}
    for raw in response:
        event = json.loads(raw)
        if "reading" in event:
            seen.update(event["reading"], reading_s=time.perf_counter() - started)
        elif "text" in event:
            seen["first_token_s"] = time.perf_counter() - started
            break
        elif "done" in event or "error" in event:
            seen["ended"] = event.get("error") or f"ended ({event['reason']}) before any text"
            break
    connection.close()
    return seen


def letter_score(port: int, category: str, index: int, shots: int) -> float:
    """Seconds to score one question's option letters (the page's "Score its option letters")."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    connection.request("POST", "/api/mmlu-pro/score", body=json.dumps({"category": category, "index": index, "shots": shots}),
                       headers={"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"})
    response = connection.getresponse()
    assert response.status == 200, (response.status, response.read()[:300])
    response.read()
    connection.close()
    return time.perf_counter() - started


def wait_for_model(port: int) -> None:
    """Until the model is loaded (the server answers pages before that)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", "/api/model")
        state = json.loads(connection.getresponse().read())["state"]
        connection.close()
        if state == "ready":
            return
        assert state != "failed", "the model did not load"
        time.sleep(1)
    raise TimeoutError("the model did not load within 600 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--category", default="history")
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--shots", type=int, default=5)
    parser.add_argument("--after-letter", metavar="CATEGORY", default=None,
                        help="then, on this category, score each question's letters before its chain of thought")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds between a letter score and its chain of thought (with --after-letter)")
    parser.add_argument("--threads", type=int, default=None, help="SCORER_THREADS (default: the server's, every core)")
    args = parser.parse_args()
    print(f"hardware: {hardware()}; load average {os.getloadavg()[0]:.1f}")
    env = {"SCORER_LOAD_AT_START": "1", **({"SCORER_THREADS": str(args.threads)} if args.threads else {})}
    with running_server(env=env, timeout=600) as server:
        port = int(server.url.rsplit(":", 1)[1])
        wait_for_model(port)
        warm = []
        for index in range(args.questions):
            seen = first_token(port, args.category, index, args.shots)
            kind = "cold" if index == 0 else "warm"
            print(f"{args.category} question {index + 1} ({kind}): reading line after {seen.get('reading_s', 0):.2f} s, "
                  f"first token after {seen.get('first_token_s', float('nan')):.2f} s; prompt "
                  f"{seen.get('prompt_tokens')} tokens, {seen.get('cached_tokens')} of them cached"
                  + (f"; {seen['ended']}" if "ended" in seen else ""))
            if index and "first_token_s" in seen:
                warm.append(seen["first_token_s"])
        if warm:
            print(f"warm first token: median {statistics.median(warm):.2f} s, slowest {max(warm):.2f} s "
                  f"over {len(warm)} questions")
        for index in range(args.questions if args.after_letter else 0):
            letters_s = letter_score(port, args.after_letter, index, args.shots)
            time.sleep(args.pause)
            seen = first_token(port, args.after_letter, index, args.shots)
            print(f"{args.after_letter} question {index + 1}: letters scored in {letters_s:.2f} s, "
                  f"{args.pause:g} s later its chain of thought's first token after "
                  f"{seen.get('first_token_s', float('nan')):.2f} s; prompt "
                  f"{seen.get('prompt_tokens')} tokens, {seen.get('cached_tokens')} of them cached")


if __name__ == "__main__":
    main()
