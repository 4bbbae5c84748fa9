"""Issue 41, item 5, the attack as it ran: one address posting the three-scorers form again and
again while another reader waits. As it ran, the form was high_school_european_history question 3 at
1 worked example, up to 20 CPU-s of the model a post within the form's budget
(bench/three_scorers_cost.py measures it); here the poster's share of model time is lowered below
what one post of the form's default question (astronomy 1, no worked examples: six short runs, a few
seconds on the 2-core machine) holds the model, so the same attack costs one cheap post instead of a
costly one.

The site is the model server's client here, as app.py runs it. The form's model time (its four
scoring runs and two generations) counts against the poster's share (livescoring/worker.py); past
it, the next post is refused with 429 and Retry-After before the model reads anything, while the
other reader's answer is written to its end. Alone, the poster is still served.
"""
from __future__ import annotations

import re
import time

import pytest

from engine import create_app
from livescoring import worker
from livescoring.scorer import Generation

pytestmark = [pytest.mark.model, pytest.mark.slow]  # slow: three posts of six model runs, a generation to its end
PAGE = "/scoring-lesson/widgets/three-scorers"
ATTACK = {"subject": "astronomy", "number": "1", "shots": "0"}
READER = "198.51.100.2"


def form_token(client) -> str:
    page = client.get(PAGE).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([0-9a-f]+)"', page).group(1)


def post_form(client, fields: dict, token: str | None = None):
    return client.post(PAGE, data={**fields, "csrf_token": token or form_token(client)})


def test_a_client_reposting_the_form_past_its_share_is_refused_while_another_reader_is_served(model_server, monkeypatch):
    # The real share is 60 s of model time in 5 minutes. One post of ATTACK held the model 5 to 14 s on
    # the loaded 2-core machine (each of its six runs 0.5 s or more): fifty times this share or more, and
    # over it on a machine many times as fast.
    monkeypatch.setattr(worker, "GENERATION_SHARE_S", 0.1)
    app = create_app({"TESTING": True, "MODEL_SERVER_URL": model_server, "PAGE_RENDER_BUDGET_S": 0,
                      "SCORER_TIMEOUT_S": 300})
    hog, service = app.test_client(), app.extensions["scoring"]
    token = form_token(hog)
    started = time.monotonic()
    first = post_form(hog, ATTACK, token)
    first_took = time.monotonic() - started
    assert first.status_code == 200, first.get_data(as_text=True)[-2000:]

    # Another reader's answer is being written (counting on: it does not stop by itself soon).
    stream = service.generate_until(Generation("1, 2, 3, 4, 5, 6, 7, 8,", max_gen_toks=64), client=READER)
    assert "reading" in next(stream)
    again = post_form(hog, ATTACK)
    html = again.get_data(as_text=True)
    assert again.status_code == 429, html[-2000:]
    assert 1 <= int(again.headers["Retry-After"]) <= worker.GENERATION_WINDOW_S
    held = re.search(r"held the model for (\d+) s in the last 5 minutes, more than one reader(&#39;|')s share", html)
    # The first post's six runs, counted: the model's part of it is nearly all of its time (its scoring
    # runs 70-80% of it on the 2-core machine, so its two generations alone are under two thirds); held is
    # said in whole seconds.
    assert held and int(held.group(1)) + 0.5 >= 2 / 3 * first_took, (held and held.group(0), first_took)
    events = list(stream)
    assert events[-1]["done"] and events[-1]["tokens"] > 0  # the reader's answer, written to its end

    alone = hog.post("/api/score", json={"subject": "astronomy", "split": "test", "index": 0, "shots": 0},
                     headers={"Origin": "http://localhost"})
    assert alone.status_code == 200  # nobody else waits: the poster is served
