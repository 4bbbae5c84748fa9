"""Unit tests for widgetkit/ and the MMLU paper's browser-side data: settings, views, the worker's entry point.

Like tests/unit/test_explainers.py, this file runs twice: under pytest in CPython, and inside Pyodide
under Node against the served wheel (tests/unit/test_explainers_pyodide.py), so it uses only the
standard library and plain asserts, and proves that the browser holds the same widgets.
"""
from __future__ import annotations

import json

import explainers as ex
from benchmarks.mmlu.figures import paper_figures, reference
from widgetkit import Param, Widget, parse_state, run_view, state_query
from widgetkit.browser import UnknownWidget, find_widget, run_batch

SIZES = {"anatomy": 135, "astronomy": 152, "virology": 166}


def test_golden_table_1_plain_mean_differs_from_reported_average():
    row = paper_figures()["table_1"]["rows"][0]
    assert row["model"] == "GPT-3 X-Large"
    groups = [row[g] for g in ("humanities", "social_sciences", "stem", "other")]
    assert groups == [40.8, 50.4, 36.7, 48.8]
    assert round(ex.plain_mean(groups), 1) == 44.2
    assert row["average"] == 43.9


def test_paper_figures_carry_their_sources():
    figures = paper_figures()
    assert figures["reference_points"]["chance"]["accuracy"] == 25.0
    assert figures["reference_points"]["expert"]["accuracy"] == 89.8
    assert figures["reference_points"]["mturk"]["accuracy"] == 34.5
    assert reference("expert") == 0.898
    for part in ("table_1", "scaling", "subjects", "splits", "calibration"):
        assert figures[part]["source"]
    unifiedqa = figures["table_1"]["rows"][1]
    assert unifiedqa["model"] == "UnifiedQA" and unifiedqa["average"] == 48.9 and unifiedqa["stem"] == 40.2
    gpt3_few = figures["scaling"]["series"][0]["points"]
    assert [p["accuracy"] for p in gpt3_few] == [25.9, 24.9, 26.0, 43.9]
    subjects = {row["name"]: row["accuracy"] for row in figures["subjects"]["rows"]}
    assert subjects["College Medicine"] == 47.4 and subjects["Elementary Mathematics"] == 29.9
    splits = figures["splits"]
    assert splits["dev"] == 5 * splits["subjects"]


def test_paper_figures_are_json_and_a_fresh_copy():
    figures = paper_figures()
    figures["reference_points"]["chance"]["accuracy"] = 0
    assert paper_figures()["reference_points"]["chance"]["accuracy"] == 25.0
    assert json.loads(json.dumps(paper_figures())) == paper_figures()


def test_settings_are_checked_never_raised():
    params = (Param("n", "Questions", "int", 100, 1, 20000, 1), Param("band", "Band", "choice", "normal",
              choices=(("normal", "normal"), ("wilson", "Wilson"))), Param("xs", "Values", "numbers", (0.5,), 0, 1))
    state, messages = parse_state(params, {"n": "30000", "band": "<script>", "xs": "0.2, 7, x"})
    assert state == {"n": 20000, "band": "normal", "xs": [0.2]}
    assert len(messages) == 4 and "changed to 20000" in messages[0]
    assert state_query(params, state) == "n=20000&xs=0.2"
    assert state_query(params, parse_state(params, {})[0]) == ""


def test_a_percent_box_is_read_in_percent_and_the_share_wins():
    params = (Param("score", "Score", "number", 0.3, 0.0, 1.0, 0.005, percent=True),
              Param("delta", "Change", "number", -0.008, -0.05, 0.05, 0.001, percent=True))
    # The box's own name, in percent, gives exactly the share its canonical name gives.
    typed, said = parse_state(params, {"score_percent": "72.6", "delta_percent": " -0.8 "})
    assert typed == parse_state(params, {"score": "0.726", "delta": "-0.008"})[0] == {"score": 0.726, "delta": -0.008}
    assert said == [] and state_query(params, typed) == "score=0.726"
    assert parse_state(params, {"score": "0.4", "score_percent": "90"})[0]["score"] == 0.4  # both: the share
    assert parse_state(params, {"score": "", "score_percent": "90"})[0]["score"] == 0.9  # an empty share: the box
    # Bad percent input: clamped or the default, with a message in the reader's unit.
    state, messages = parse_state(params, {"score_percent": "150", "delta_percent": "lots"})
    assert state == {"score": 1.0, "delta": -0.008}
    assert messages == ["Score must be between 0% and 100%; 150% was changed to 100%.",
                        "Change: “lots%” is not a number; using -0.8%."]
    for hostile in ("NaN", "-Infinity", "sNaN", "1e999999999999", "9" * 5000):
        state, messages = parse_state(params, {"score_percent": hostile})
        assert 0.0 <= state["score"] <= 1.0 and len(messages) == 1


def test_a_view_returns_a_new_state_and_leaves_its_input_alone():
    widget = find_widget("mmlu", "calibration-bars")
    raw = {"conf": "0.9,0.8,0.7", "correct": "1,0", "bins": "5"}
    before = dict(raw)
    view = run_view(widget, raw)
    assert raw == before
    assert view["state"]["conf"] == [0.9, 0.8] and view["state"]["bins"] == 2
    assert view["query"] == "conf=0.9,0.8&correct=1,0"  # the query is that of the state shown
    assert any("first 2 pairs" in m for m in view["messages"])


def test_a_chosen_subject_sets_the_number_of_questions():
    widget = find_widget("mmlu", "chance-explorer")
    subjects = {name: {"title": name, "test": size} for name, size in SIZES.items()}
    view = run_view(widget, {"subject": "virology", "n": "5"}, {"subjects": subjects})
    assert view["state"]["n"] == 166 and view["numbers"]["n"] == 166
    assert "n=166" in view["query"] and "subject=virology" in view["query"]


def test_context_is_checked_and_only_declared_keys_reach_the_view():
    gate = find_widget("mmlu", "release-gate")
    # The shared gate takes its context as optional (accepts): a malformed value is refused, a missing one is not.
    for bad, words in (({"subject_sizes": {"a": -1}}, "context.subject_sizes"),
                       ({"subject_sizes": SIZES, "live_pairs": {"subjects": ["a"]}}, "context.live_pairs")):
        try:
            run_view(gate, {}, bad)
        except ValueError as error:
            assert words in str(error), (bad, str(error))
        else:
            raise AssertionError(f"{bad} was accepted")
    view = run_view(gate, {}, {"subject_sizes": SIZES, "anything": object()})
    assert view["numbers"]["subjects"] == 3


def test_widgets_are_found_by_the_papers_convention():
    assert find_widget("mmlu", "scaling-plot").name == "scaling-plot"
    for paper, name in (("mmlu", "no-such-widget"), ("no-such-paper", "x"), ("mmlu", "../etc"), ("MMLU", "x")):
        try:
            find_widget(paper, name)
        except UnknownWidget:
            continue
        raise AssertionError(f"{paper}/{name} was found")
    assert isinstance(find_widget("mmlu", "live-scoring"), Widget)


def test_run_batch_reports_each_call_separately():
    out = json.loads(run_batch(json.dumps([
        {"fn": "expected_score", "args": {"known": 0.5}},
        {"fn": "standard_error", "args": {"p": 2, "n": 10}},
        {"fn": "no_such_function", "args": {}},
        {"fn": "chance_band", "args": {"n": 100}},
        "not a call",
        {"fn": "standard_error", "args": {"p": 0.25, "n": 100}, "shown": True},
        {"view": "mmlu/scaling-plot", "state": {"show": "fewshot"}},
        {"view": "mmlu/nothing", "state": {}},
    ])))
    assert out[0] == {"result": 0.625}
    assert out[1]["kind"] == "ValueError" and out[1]["error"].startswith("p ")
    assert out[2]["kind"] == "UnknownFunction"
    assert [round(x, 3) for x in out[3]["result"]] == [0.165, 0.335]
    assert out[4]["kind"] == "ValueError"
    assert out[5]["result"]["shown"] == "0.0433"
    assert out[6]["result"]["widget"] == "scaling-plot" and out[6]["result"]["query"] == "show=fewshot"
    assert out[7]["kind"] == "UnknownWidget"
