"""The flips view (``/<document>/widgets/question-flips``) on the published runs: what a reader waits for.

    python3 bench/flips.py             # each filter state drawn 5 times
    python3 bench/flips.py --repeat 20

Prints the first view's time (the four published runs read with each question's text, once per
server process), then each filter state's view time (p50 and max, the widget's view alone, as the
JSON route computes it, before the page cache) and the size of its page as served (bytes, and
gzipped, what a phone downloads: 20 questions a page, whatever the 14,042). Reads the MMLU files
from MMLU_DATA_DIR, as the server does.
"""
from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import hardware  # noqa: E402

from engine import create_app  # noqa: E402
from engine.widgets import context_for  # noqa: E402
from widgetkit import run_view  # noqa: E402

STATES = [
    {},
    {"kind": "right_to_wrong"},
    {"kind": "wrong_to_right", "group": "STEM", "page": "3"},
    {"subject": "professional_law", "letter": "C"},
    {"sort": "order", "page": "400"},
    {"production": "5-shot", "candidate": "5-shot generative"},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    app = create_app({"TESTING": True})
    print(hardware())
    with app.test_request_context():
        paper = app.extensions["documents"]["mmlu"]
        widget = paper.widgets["question-flips"]
        context = context_for(paper, widget)
        started = time.perf_counter()
        for key, _ in context["published_runs"]:
            context["published_answers"].answers(key)
        print(f"first view: the {len(context['published_runs'])} published runs with their questions read in "
              f"{time.perf_counter() - started:.2f} s")
        for state in STATES:
            times = []
            for _ in range(args.repeat):
                started = time.process_time()
                view = run_view(widget, state, context)
                times.append(time.process_time() - started)
            query = "&".join(f"{k}={v}" for k, v in state.items())
            page = app.test_client().get(f"/mmlu/widgets/question-flips?{query}").get_data()
            print(f"{query or '(default)':48} {len(view['rows']):>2} rows of {view['pages']['shown']:>5,}: "
                  f"view p50 {1000 * statistics.median(times):6.1f} ms, max {1000 * max(times):6.1f} ms CPU; "
                  f"page {len(page) / 1024:6.1f} KiB, gzipped {len(gzip.compress(page)) / 1024:5.1f} KiB")


if __name__ == "__main__":
    main()
