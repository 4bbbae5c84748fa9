"""The MMLU document's server side: the benchmark it scores, its widgets' data, its commands.

``init_app`` sets up MMLU (benchmarks/mmlu/server/), its score and question API (``/api/score``,
``/api/questions``) and this document's "Run it yourself" page (``/mmlu/run``, server/run_page.py);
``widget_context`` gives subject and group sizes and the live model's published runs;
``live_widget`` draws the live scoring widget as the model is now; ``math_examples`` are its rows of
``/math-core``.
"""
from __future__ import annotations

from flask import Flask

from benchmarks.mmlu import server as mmlu
from benchmarks.mmlu.data import DataMissing
from benchmarks.mmlu.figures import paper_figures
from benchmarks.mmlu.server import published_runs, rotation_runs
from engine.documents import DocumentHooks


def init_app(app: Flask, document) -> None:
    from benchmarks.mmlu.server import api

    from .server import run_page

    mmlu.init_app(app)
    app.register_blueprint(api.bp, url_prefix="/api")
    app.register_blueprint(run_page.bp)


def widget_context(app: Flask) -> dict:
    """What the widgets may declare: subjects with their test sizes, sizes by subject and by group,
    the live model's published runs (published_runs.py; for the flips view, every answer with its
    question's text) and rotation checks (rotation_runs.py), and (for widgets drawn by the server) the
    dataset itself."""
    data = app.extensions["mmlu_data"]
    subjects = data.subjects
    answers = published_runs.PublishedAnswers(data)
    return {
        **published_runs.widget_context(data),
        "published_answers": answers, "published_runs": answers.runs,
        **rotation_runs.widget_context({name: s.sizes["test"] for name, s in subjects.items()}),
        "subjects": {name: {"title": s.title, "test": s.sizes["test"]} for name, s in subjects.items()},
        "subject_sizes": {name: s.sizes["test"] for name, s in subjects.items()},
        "group_sizes": data.group_sizes("test"),
        "subject_groups": {name: s.group for name, s in subjects.items()},
        "dataset": data,
    }


def live_widget(widget, mode: str) -> dict:
    """Template variables for the live-scoring widget, as the model is now."""
    from .server.run_page import context, default_values

    return {"ls": context(default_values(mmlu.dataset()))}


def static_files(app: Flask) -> dict[str, bytes]:
    """For the static export: the published runs' answers, by subject, with their questions (the
    live-scoring widget's, and the prompt anatomy's test questions), and each subject's worked
    examples (``prompt-anatomy/<subject>.json``), from which the worker draws the prompt anatomy."""
    import json

    from benchmarks.mmlu.server import published_answers

    data = app.extensions["mmlu_data"]
    files = published_answers.static_files(data)
    for subject in data.subjects:
        shots = [{"question": q.question, "choices": list(q.choices), "key": q.answer} for q in data.questions(subject, "dev")]
        files[f"prompt-anatomy/{subject}.json"] = json.dumps(shots, sort_keys=True, ensure_ascii=False,
                                                             separators=(",", ":")).encode()
    return files


def static_live_widget(widget, mode: str) -> tuple[str, dict] | None:
    """The live-scoring widget in the static export: standard questions answered from the published runs."""
    if widget.name != "live-scoring":
        return None
    data = mmlu.dataset()
    return "widgets/live-scoring-published.html", {
        "subjects": [{"name": s.name, "title": s.title, "questions": s.sizes["test"]} for s in data.subjects.values()],
    }


def math_examples() -> list[tuple[str, dict, str]]:
    """The page's worked examples as (function, keyword arguments, where it comes from); paper
    numbers come from figures.py, so they are written once."""
    figures = paper_figures()
    examples = figures["examples"]
    calibration = {"confidences": examples["calibration"]["confidences"], "correct": examples["calibration"]["correct"]}
    gpt3 = figures["table_1"]["rows"][0]
    return [
        ("standard_error", {"p": 0.25, "n": 100}, "§3: a guesser on a 100-question subject"),
        ("chance_band", {"n": 100}, "§3: where 95% of guessing runs land"),
        ("chance_band", {"n": 100, "method": "exact"}, "the same band from the binomial distribution itself"),
        ("margin_of_error", {"p": gpt3["average"] / 100, "n": figures["splits"]["test"]},
         "§3: GPT-3's 43.9% on the whole test"),
        ("confidence_interval", {"p": 0.3, "n": 100}, "the chance explorer's starting point"),
        ("confidence_interval", {"p": 0.3, "n": 100, "method": "wilson"}, "the same, Wilson interval"),
        ("is_distinguishable_from_chance", {"score": 0.3, "n": 1000}, "the explorer with 1,000 questions"),
        ("predict", {"letter_probs": examples["letter_probs"]}, "§4.1: Figure 1's letter probabilities"),
        ("accuracy", {"predictions": ["B", "C", "A", "D", "B"], "keys": ["B", "A", "A", "D", "C"]},
         "§4.1: five questions"),
        ("weighted_accuracy", dict(examples["groups"]), "§4.1: question-weighted average"),
        ("plain_mean", {"values": [gpt3[k] for k in ("humanities", "social_sciences", "stem", "other")]},
         "Table 1: GPT-3 X-Large's four groups"),
        ("average_confidence", {"confidences": calibration["confidences"]}, "§4.2: the ten-answer example"),
        ("calibration_gap", calibration, "§4.2: claimed minus delivered"),
        ("rms_calibration_error", {**calibration, "bins": 2}, "§4.2: two confidence groups"),
        ("margin_of_error", {"p": 0.85, "n": 14042}, "release gate: 85% on 14,042 questions"),
        ("gate_verdict", {"candidate": [1, 1, 0, 1, 0, 1, 1, 0], "baseline": [1, 0, 0, 1, 1, 0, 1, 0],
                          "clusters": ["law", "law", "law", "math", "math", "math", "art", "art"]},
         "release gate: eight questions, three subjects"),
        ("expected_score", {"known": 0.5}, "a model that knows half the answers"),
        ("simulate_contamination", {"accuracy": 0.45, "leaked_fraction": 0.1, "questions": 1000, "seed": 1},
         "10% of questions leaked"),
    ]


HOOKS = DocumentHooks(
    init_app=init_app,
    widget_context=widget_context,
    live_widget=live_widget,
    static_files=static_files,
    static_live_widget=static_live_widget,
    math_examples=math_examples,
    # MMLU's own commands (python -m benchmarks mmlu ...), under their old name python -m engine mmlu ...
    commands=mmlu.COMMANDS,
    unavailable=(DataMissing,),
)
