"""What one post of the three-scorers form costs, in CPU-seconds of the model server and the site.

    python3 bench/three_scorers_cost.py                  # European history #3 and #95 at 1 shot
    python3 bench/three_scorers_cost.py --question 3 --shots 1 --posts 3

Issue 41, item 5: the form (six model runs: letter, full answer and a generation, plain and in the
chat template) cost up to 36 CPU-s a post within its budget (high_school_european_history, question
number 3 as the form counts, from 1, at 1 worked example). This starts the model server
(``python -m livescoring serve``) and the site (``python3 app.py`` with MODEL_SERVER_URL, as app.py
runs its own child), warms both (the model loaded, the site connected, by one cheap astronomy
post), then posts the form for each question ``--posts`` times: the first post finds the model
server's prefix cache cold for that question, the later ones warm. Each post's cost is the
utime+stime of both processes (/proc/PID/stat) before and after it, with the form's work (its budget,
content/scoring-lesson/server/three_scorers.form_work) beside it. Question 95 at 1 shot is the costliest
form the budget lets through (31,796 of 32,000 work characters). ``--threads`` is the model
server's torch threads (2 by default: app.py's default, every core, on the 2-core machine). Figures:
docs/performance.md, "The three-scorers form's cost".
"""
from __future__ import annotations

import argparse
import http.client
import os
import re
import time
import urllib.parse
from pathlib import Path

from common import hardware, running_server

from tools.launcher import running_model_server

PAGE = "/scoring-lesson/widgets/three-scorers"
SUBJECT = "high_school_european_history"
TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def call(port: int, method: str, path: str, form: dict | None = None) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = urllib.parse.urlencode(form) if form is not None else None
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if form is not None else {}
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text


def post_form(port: int, subject: str, number: int, shots: int) -> tuple[int, str]:
    status, page = call(port, "GET", PAGE)
    token = TOKEN.search(page)
    assert status == 200 and token, f"the form page answered {status} without a form token"
    return call(port, "POST", PAGE + "?fragment=1", {"subject": subject, "number": str(number), "shots": str(shots),
                                                     "csrf_token": token.group(1)})


def form_work(subject: str, number: int, shots: int) -> int:
    from benchmarks.mmlu.server import data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from widgetkit.registry import mount_document

    mount_document("scoring-lesson", Path(__file__).resolve().parents[1] / "content" / "scoring-lesson")
    from documents.scoring_lesson.server import three_scorers as form

    data = MMLUData(data_dir({}))
    question = data.question(subject, "test", number - 1)
    return form.form_work({"subject": subject, "question": question.question, "choices": list(question.choices),
                           "shots": data.questions(subject, "dev")[:shots]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--question", type=int, action="append", help="question number, from 1 (default: 3 and 95)")
    parser.add_argument("--shots", type=int, default=1)
    parser.add_argument("--posts", type=int, default=2, help="posts per question: the first cold, the rest warm")
    parser.add_argument("--threads", default="2", help="the model server's torch threads (SCORER_THREADS)")
    args = parser.parse_args()
    print(f"hardware: {hardware()}; model server with {args.threads} torch threads", flush=True)
    with running_model_server(args=("--threads", args.threads)) as model, \
            running_server(env={"MODEL_SERVER_URL": model.url}) as site:
        port = int(site.url.rsplit(":", 1)[1])
        status, _ = post_form(port, "astronomy", 1, 0)  # the site connects; the model is loaded already
        assert status == 200, f"the warm-up post answered {status}"
        for number in args.question or [3, 95]:
            print(f"{SUBJECT} #{number} at {args.shots} shot(s): form work {form_work(SUBJECT, number, args.shots):,} "
                  "work characters (budget 32,000)", flush=True)
            for n in range(args.posts):
                before = cpu_seconds(model.pid), cpu_seconds(site.pid), time.perf_counter()
                status, text = post_form(port, SUBJECT, number, args.shots)
                after = cpu_seconds(model.pid), cpu_seconds(site.pid), time.perf_counter()
                spent_model, spent_site, wall = (b - a for a, b in zip(before, after, strict=True))
                said = re.sub(r"<[^>]+>|\s+", " ", text)[:160].strip()
                refused = "" if status == 200 else f" ({said})"
                print(f"  post {n + 1} ({'cold' if n == 0 else 'warm'} prefix cache): {status}, "
                      f"model server {spent_model:.1f} CPU-s + site {spent_site:.1f} CPU-s = "
                      f"{spent_model + spent_site:.1f} CPU-s, {wall:.1f} s wall{refused}", flush=True)


if __name__ == "__main__":
    main()
