"""The live model's published runs as the widgets draw them (benchmarks/mmlu/server/published_runs.py,
benchmarks/live_runs.py).

The summary is checked against numpy on runs written here over a two-subject copy of the real data
(so every figure has a known answer), and a published folder that is not complete is refused. The
widgets' live sources are checked on that summary; the real published runs, where present, are
checked in tests/model/test_published_runs.py.
"""
from __future__ import annotations

import gzip
import json
import random

import numpy as np
import pytest
from documents.mmlu.widgets.calibration_bars import WIDGET as CALIBRATION
from documents.mmlu.widgets.group_bars import WIDGET as GROUPS
from documents.mmlu.widgets.release_gate import WIDGET as GATE
from documents.mmlu.widgets.scaling_plot import WIDGET as SCALING
from documents.mmlu.widgets.subject_bars import WIDGET as SUBJECTS

from benchmarks import live_runs
from benchmarks.mmlu.server import data_dir, published_runs
from benchmarks.mmlu.server.reader import MMLUData
from widgetkit import run_view

SUBJECTS_KEPT = ("astronomy", "high_school_geography")  # one STEM subject, one social-sciences subject
MODEL = "SmolLM2-135M-Instruct (test)"


@pytest.fixture(scope="module")
def small_data(tmp_path_factory):
    """The real files of two subjects, as a data folder of their own (links, read-only)."""
    source, root = data_dir({}), tmp_path_factory.mktemp("mmlu")
    lines = (source / "subjects.csv").read_text(encoding="utf-8").splitlines()
    kept = [lines[0]] + [line for line in lines[1:] if line.split(",")[0] in SUBJECTS_KEPT]
    (root / "subjects.csv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    for split in ("dev", "val", "test"):
        (root / split).mkdir()
        for subject in SUBJECTS_KEPT:
            (root / split / f"{subject}_{split}.csv").symlink_to(source / split / f"{subject}_{split}.csv")
    return MMLUData(root)


def made_run(data: MMLUData, shots: int, seed: int, model: str = MODEL) -> list[dict]:
    """One complete run's rows, as `evaluate` writes them, with random probabilities."""
    rng, rows = random.Random(seed), []
    for subject in SUBJECTS_KEPT:
        for q in data.questions(subject, "test"):
            weights = [rng.random() ** 3 for _ in "ABCD"]
            probabilities = {letter: w / sum(weights) for letter, w in zip("ABCD", weights, strict=True)}
            prediction = max(probabilities, key=probabilities.get)
            rows.append({"subject": subject, "split": "test", "index": q.index, "method": "letter", "shots": shots,
                         "probabilities": probabilities, "prediction": prediction, "key": q.answer,
                         "correct": prediction == q.answer, "confidence": probabilities[prediction],
                         "vocabulary_share": 0.5, "model": model})
    rng.shuffle(rows)  # evaluate writes questions in its own order, not the files'
    return rows


def write(folder, name: str, rows: list[dict]) -> None:
    folder.mkdir(exist_ok=True)
    with gzip.open(folder / name, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in rows)


@pytest.fixture(scope="module")
def published(small_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    rows = {0: made_run(small_data, 0, seed=1), 5: made_run(small_data, 5, seed=2)}
    for shots, run in rows.items():
        write(folder, f"smollm2-{shots}shot.jsonl.gz", run)
    return rows, published_runs.widget_context(small_data, folder)


def in_file_order(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["subject"], r["index"]))


def numpy_groups(conf: np.ndarray, right: np.ndarray, bins: int, binning: str) -> list[tuple[int, float, float]]:
    """Calibration groups computed independently: (size, mean confidence, accuracy)."""
    if binning == "equal_count":
        order = np.argsort(conf, kind="stable")
        size = len(conf) // bins
        cuts = [order[j * size:(j + 1) * size] for j in range(bins - 1)] + [order[(bins - 1) * size:]]
    else:
        which = np.minimum(np.floor(conf * bins).astype(int), bins - 1)
        cuts = [np.flatnonzero(which == j) for j in range(bins) if np.any(which == j)]
    return [(len(c), conf[c].mean(), right[c].mean()) for c in cuts]


def test_the_summary_matches_an_independent_count(published):
    rows, context = published
    assert context["live_scores"]["model"] == MODEL
    assert [run["key"] for run in context["live_scores"]["runs"]] == ["0-shot", "5-shot"]
    for shots, run in zip((0, 5), context["live_scores"]["runs"], strict=True):
        ordered = in_file_order(rows[shots])
        right = np.array([r["correct"] for r in ordered], dtype=float)
        assert run["questions"] == len(ordered) and run["correct"] == right.sum()
        for subject in SUBJECTS_KEPT:
            mine = [r["correct"] for r in ordered if r["subject"] == subject]
            assert run["subjects"][subject] == [sum(mine), len(mine)]
        assert run["groups"] == {"stem": run["subjects"]["astronomy"],
                                 "social_sciences": run["subjects"]["high_school_geography"]}
        pairs = next(p for p in context["live_pairs"]["runs"] if p["key"] == run["key"])
        assert pairs["marks"] == "".join("1" if r["correct"] else "0" for r in ordered)
    assert context["live_pairs"]["order"] == [[s, sum(r["subject"] == s for r in rows[0])] for s in SUBJECTS_KEPT]


def generative_run(data: MMLUData, shots: int, seed: int) -> list[dict]:
    """One complete generative run's rows, as `evaluate --method generative` writes them."""
    rng, rows = random.Random(seed), []
    for subject in SUBJECTS_KEPT:
        for q in data.questions(subject, "test"):
            letter = rng.choice(["A", "B", "C", "D", None])
            rows.append({"subject": subject, "split": "test", "index": q.index, "method": "generative",
                         "template": "plain", "options": 4, "shots": shots, "probabilities": None,
                         "prediction": letter, "key": q.answer, "correct": letter == q.answer,
                         "response": letter or "", "generated": f" {letter}" if letter else "", "confidence": None,
                         "vocabulary_share": None, "model": MODEL})
    return rows


def test_generative_runs_are_paired_but_neither_scored_nor_calibrated(small_data, tmp_path):
    """The gate sets generative runs beside the letter ones; the score and calibration widgets draw
    letter runs only, and the live form's printed example comes from the letter run."""
    letter = {0: made_run(small_data, 0, seed=1), 5: made_run(small_data, 5, seed=2)}
    generative = {0: generative_run(small_data, 0, seed=3), 5: generative_run(small_data, 5, seed=4)}
    for shots in (0, 5):
        write(tmp_path, f"m-{shots}shot.jsonl.gz", letter[shots])
        write(tmp_path, f"m-{shots}shot-generative.jsonl.gz", generative[shots])
    context = published_runs.widget_context(small_data, tmp_path)
    assert [run["key"] for run in context["live_scores"]["runs"]] == ["0-shot", "5-shot"]
    assert [run["key"] for run in context["live_calibration"]["runs"]] == ["0-shot", "5-shot"]
    pairs = context["live_pairs"]
    assert [(run["key"], run["method"]) for run in pairs["runs"]] == [
        ("0-shot", "letter"), ("5-shot", "letter"), ("0-shot generative", "generative"),
        ("5-shot generative", "generative")]
    for shots in (0, 5):
        marks = live_runs.run_of(pairs, f"{shots}-shot generative")["marks"]
        assert marks == "".join("1" if r["correct"] else "0" for r in in_file_order(generative[shots]))
    assert live_runs.run_pair(pairs) == ("0-shot", "5-shot")
    assert live_runs.run_pair(pairs, "generative") == ("0-shot generative", "5-shot generative")
    assert live_runs.live_pairs("live_pairs", pairs) == pairs
    first = in_file_order(letter[0])[0]
    assert published_runs.published_answer(first["subject"], first["index"], tmp_path) == first


@pytest.mark.parametrize("binning", ["equal_count", "fixed_width"])
def test_the_calibration_table_matches_numpy(published, binning):
    rows, context = published
    for shots, run in zip((0, 5), context["live_calibration"]["runs"], strict=True):
        ordered = in_file_order(rows[shots])
        conf = np.array([r["confidence"] for r in ordered])
        right = np.array([r["correct"] for r in ordered], dtype=float)
        assert run["average_confidence"] == pytest.approx(conf.mean(), abs=1e-12)
        assert run["gap"] == pytest.approx(conf.mean() - right.mean(), abs=1e-12)
        for bins, entry in enumerate(run["table"][binning], start=1):
            expected = numpy_groups(conf, right, bins, binning)
            got = [(g["n"], g["confidence"], g["accuracy"]) for g in entry["groups"]]
            assert [n for n, *_ in got] == [n for n, *_ in expected]
            assert np.allclose([x[1:] for x in got], [x[1:] for x in expected], atol=1e-12)
            sizes = np.array([n for n, *_ in expected])
            gaps = np.array([a - c for _, c, a in expected])
            assert entry["rms"] == pytest.approx(np.sqrt(np.sum(sizes / sizes.sum() * gaps ** 2)), abs=1e-12)


def refused(caplog, make, message: str) -> bool:
    """Runs that cannot be drawn are left out (no live context) and the reason is logged; the site stays up."""
    caplog.clear()
    return make() == {} and any(message in record.getMessage() for record in caplog.records)


def test_no_published_folder_means_no_live_context(small_data, tmp_path):
    assert published_runs.widget_context(small_data, tmp_path / "absent") == {}
    assert published_runs.widget_context(small_data, tmp_path) == {}


@pytest.mark.parametrize("damage, message", [
    (lambda rows: rows[:-1], "not one complete test run"),
    (lambda rows: rows + rows[:1], "not one complete test run"),
    (lambda rows: rows[:1] + [{**row, "shots": 3} for row in rows[1:]], "mixes 2 settings"),
])
def test_an_incomplete_or_mixed_run_is_refused(small_data, tmp_path, damage, message, caplog):
    write(tmp_path, "smollm2-0shot.jsonl.gz", damage(made_run(small_data, 0, seed=3)))
    assert refused(caplog, lambda: published_runs.widget_context(small_data, tmp_path), message)


def test_runs_of_two_models_are_refused(small_data, tmp_path, caplog):
    write(tmp_path, "a-0shot.jsonl.gz", made_run(small_data, 0, seed=4))
    write(tmp_path, "b-5shot.jsonl.gz", made_run(small_data, 5, seed=5, model="another model"))
    assert refused(caplog, lambda: published_runs.widget_context(small_data, tmp_path), "2 different models")


def test_the_context_checks_name_what_is_wrong(published):
    _, context = published
    pairs = context["live_pairs"]
    short = {**pairs, "runs": [{**pairs["runs"][0], "marks": pairs["runs"][0]["marks"][:-1]}]}
    with pytest.raises(ValueError, match=r"context\.live_pairs\.runs\[0\]\.marks must be"):
        live_runs.live_pairs("context.live_pairs", short)
    letters = {**pairs, "runs": [{**pairs["runs"][0], "marks": "x" * len(pairs["runs"][0]["marks"])}]}
    with pytest.raises(ValueError, match="each 0 or 1"):
        live_runs.live_pairs("context.live_pairs", letters)
    scores = context["live_scores"]
    too_many = {**scores, "runs": [{**scores["runs"][0], "subjects": {"astronomy": [200, 152]}}]}
    with pytest.raises(ValueError, match=r"more right answers \(200\) than questions \(152\)"):
        live_runs.live_scores("context.live_scores", too_many)


def sizes_of(data: MMLUData) -> dict:
    return {
        "subject_sizes": {name: s.sizes["test"] for name, s in data.subjects.items()},
        "group_sizes": {"humanities": 1, "social_sciences": 198, "stem": 152, "other": 1},
    }


def test_each_widget_offers_and_draws_the_live_runs(published, small_data):
    rows, context = published
    ordered = {shots: in_file_order(run) for shots, run in rows.items()}
    accuracy = {shots: np.mean([r["correct"] for r in run]) for shots, run in ordered.items()}

    view = run_view(CALIBRATION, {"source": "5-shot", "bins": 4, "binning": "fixed_width"}, context)
    assert view["messages"] == []
    assert view["numbers"]["accuracy"] == pytest.approx(accuracy[5])
    assert view["numbers"]["rms"] == context["live_calibration"]["runs"][1]["table"]["fixed_width"][3]["rms"]
    assert "SmolLM2-135M-Instruct, 5-shot, on all 350 test questions" in view["summary"][0]
    assert run_view(CALIBRATION, {}, context)["state"]["source"] == "example"  # the paper's example stays first

    gate = run_view(GATE, {"source": "live"}, {**context, **sizes_of(small_data)})
    assert gate["numbers"]["delta"] == pytest.approx(accuracy[5] - accuracy[0])
    assert "(350 questions): its 0-shot run (production) against its 5-shot run (candidate)" in gate["summary"][1]

    subjects_context = {**context, "subject_sizes": {"astronomy": 152, "high_school_geography": 198,
                                                     "college_chemistry": 100, "us_foreign_policy": 100,
                                                     "high_school_us_history": 204, "elementary_mathematics": 378,
                                                     "college_medicine": 173, "high_school_physics": 151,
                                                     "professional_law": 1534, "moral_scenarios": 895}}
    assert "5-shot" in dict(SUBJECTS.params(subjects_context)[0].choices)

    scaling = run_view(SCALING, {}, context)
    assert "live" in scaling["state"]["show"]
    assert f"135M 0-shot {100 * accuracy[0]:.1f}%" in " ".join(scaling["summary"])


def test_the_group_bars_show_the_live_runs_as_table_rows(published, small_data):
    rows, context = published
    view = run_view(GROUPS, {"models": "live"}, {**context, **sizes_of(small_data)})
    assert list(view["numbers"]) == ["SmolLM2-135M, 0-shot", "SmolLM2-135M, 5-shot"]
    assert "some groups are not in its run" in " ".join(view["summary"])  # two groups have no questions here


def test_without_published_runs_the_widgets_are_as_before():
    assert [p.name for p in CALIBRATION.params({})][0] == "conf"
    assert "models" not in [p.name for p in GROUPS.params({})]
    assert "live" not in dict(GATE.params({})[0].choices)  # the simulation and the shapes' examples only


def test_without_the_dataset_the_runs_must_agree_with_each_other(small_data, tmp_path, caplog):
    write(tmp_path, "a-0shot.jsonl.gz", made_run(small_data, 0, seed=6))
    write(tmp_path, "a-5shot.jsonl.gz", made_run(small_data, 5, seed=7))
    context = published_runs.widget_context(None, tmp_path)
    assert context["live_scores"]["runs"][0]["groups"] == {}  # groups come from subjects.csv
    assert context["live_pairs"]["order"] == [[s, small_data.subject(s).sizes["test"]] for s in SUBJECTS_KEPT]
    write(tmp_path, "a-5shot.jsonl.gz", made_run(small_data, 5, seed=7)[1:])
    assert refused(caplog, lambda: published_runs.widget_context(None, tmp_path), "do not hold the same questions")
