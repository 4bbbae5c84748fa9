"""The scoring lesson: its gate against numpy, its run readers, its command, its page and its data counts."""
from __future__ import annotations

import gzip
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from documents.scoring_lesson.widgets.two_run_gate import WIDGET

from benchmarks.__main__ import main as benchmarks_main
from benchmarks.gate import compare
from benchmarks.live_runs import paired_marks, run_pair
from benchmarks.mmlu.server import data_dir as mmlu_data_dir
from benchmarks.mmlu.server import published_runs
from benchmarks.mmlu.server.data_checks import overlap_with_test, split_counts
from benchmarks.runs import RunFormatError, benchmark_of_task, pair_runs, read_run, subject_of_task, task_of_file
from benchmarks.server.runfile import read_rows
from engine.__main__ import main as engine_main
from widgetkit import run_view

HARNESS = Path(__file__).resolve().parents[1] / "fixtures" / "harness_samples"
# The gate's example: the live model's published whole-test runs, 0-shot (production) and 5-shot.
EXAMPLE = [published_runs.RUNS_DIR / f"smollm2-135m-instruct-{k}shot.jsonl.gz" for k in (0, 5)]


def example_context() -> dict:
    """The example as the lesson's widget gets it: the MMLU paper's summary of its published runs."""
    return published_runs.widget_context(None)["live_pairs"]


def example_pair() -> dict:
    example = example_context()
    pair = run_pair(example)
    assert pair == ("0-shot", "5-shot")  # production, candidate
    return paired_marks(example, *pair)


def text_of(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8")


def numpy_gate(candidate, baseline, subjects):
    """The seed's recipe, written with numpy: an independent computation of the gate's numbers."""
    c, b, s = np.array(candidate, float), np.array(baseline, float), np.array(subjects)
    d = c - b
    n = len(d)
    delta = d.mean()
    resid = d - delta
    sums = np.array([resid[s == k].sum() for k in np.unique(s)])
    return {
        "delta": delta,
        "naive_se": np.sqrt(c.mean() * (1 - c.mean()) / n + b.mean() * (1 - b.mean()) / n),
        "paired_se": d.std(ddof=1) / np.sqrt(n),
        "clustered_se": np.sqrt((sums ** 2).sum()) / n,
    }


def clustered_pair(seed, subjects=40, size=60, subject_sd=0.15, shift=0.0, shift_subjects=()):
    """Paired 0/1 results with known cluster structure: each subject has its own change in the
    candidate's accuracy (normal, sd ``subject_sd``), plus ``shift`` on the named subjects."""
    rng = random.Random(seed)
    candidate, baseline, names = [], [], []
    for j in range(subjects):
        name = f"subject_{j:02d}"
        p = rng.uniform(0.4, 0.8)
        q = min(0.98, max(0.02, p + rng.gauss(0, subject_sd) + (shift if name in shift_subjects else 0.0)))
        for _ in range(size):
            u = rng.random()
            b = int(u < p)
            c = int(u < q) if rng.random() < 0.8 else int(rng.random() < q)  # mostly the same questions right
            baseline.append(b)
            candidate.append(c)
            names.append(name)
    return {"candidate": candidate, "baseline": baseline, "subjects": names}


@pytest.mark.parametrize("seed", range(5))
def test_gate_matches_numpy_on_clustered_data(seed):
    pair = clustered_pair(seed)
    report = compare(pair)
    expected = numpy_gate(pair["candidate"], pair["baseline"], pair["subjects"])
    for key, value in expected.items():
        assert report[key] == pytest.approx(float(value), abs=1e-12), key
    # subjects moving on their own: clustering widens the error bar well past the paired one
    assert report["clustered_se"] > 1.5 * report["paired_se"]
    # pairing: the paired error is below the independent one when answers correlate
    assert report["paired_se"] < report["naive_se"]


def test_per_subject_deltas_match_numpy_and_are_sorted():
    pair = clustered_pair(7)
    rows = compare(pair)["subject_rows"]
    d = np.array(pair["candidate"], float) - np.array(pair["baseline"], float)
    s = np.array(pair["subjects"])
    for row in rows:
        assert row["delta"] == pytest.approx(float(d[s == row["subject"]].mean()))
        assert row["n"] == int((s == row["subject"]).sum())
    assert [r["delta"] for r in rows] == sorted(r["delta"] for r in rows)


@pytest.mark.slow  # both whole published runs
def test_the_published_runs_against_numpy():
    """The widget's example (from the server's summary) against numpy on the two files' own rows."""
    report = compare(example_pair())
    production, candidate = ({(r["subject"], r["index"]): r for r in read_rows(path)} for path in EXAMPLE)
    assert production.keys() == candidate.keys() and len(production) == 14_042
    keys = sorted(production)
    assert {production[k]["shots"] for k in keys} == {0} and {candidate[k]["shots"] for k in keys} == {5}
    expected = numpy_gate([int(candidate[k]["correct"]) for k in keys], [int(production[k]["correct"]) for k in keys],
                          [k[0] for k in keys])
    for key, value in expected.items():
        assert report[key] == pytest.approx(float(value), abs=1e-12), key
    assert report["n"] == 14_042 and len(report["subject_rows"]) == 57


# -- shapes ----------------------------------------------------------------------------------

GROUPS = {f"subject_{j:02d}": ("STEM" if j < 10 else "humanities" if j < 20 else "other") for j in range(40)}
STEM = tuple(s for s, g in GROUPS.items() if g == "STEM")


def test_noise_shape():
    assert compare(clustered_pair(1, subject_sd=0.0), GROUPS)["shape"] == "noise"


def test_knowledge_regression_shape_names_the_group():
    pair = clustered_pair(2, subject_sd=0.02, shift=-0.4, shift_subjects=STEM)
    report = compare(pair, GROUPS)
    assert report["verdict"] == "investigate" and report["shape"] == "knowledge"
    assert any(g["group"] == "STEM" and g["moved"] and not g["rest_moved"] for g in report["groups"])


def test_format_regression_shape():
    letter = clustered_pair(1, subject_sd=0.0)
    generative = clustered_pair(4, subject_sd=0.02, shift=-0.3, shift_subjects=tuple(GROUPS))
    assert compare(letter, GROUPS, generative=generative)["shape"] == "format"


def test_a_format_regression_may_carry_a_smaller_letter_move():
    """Letter scoring "held" when it moved by at most a quarter of the generated answers' drop
    (benchmarks.gate.FORMAT_SHARE); a letter move larger than that is not a format regression."""
    from benchmarks.gate import FORMAT_SHARE, report_lines

    generative = clustered_pair(4, subject_sd=0.02, shift=-0.3, shift_subjects=tuple(GROUPS))
    for shift, shape in ((-0.05, "format"), (-0.3, "unexplained")):
        letter = clustered_pair(1, subject_sd=0.0, shift=shift, shift_subjects=tuple(GROUPS))
        report = compare(letter, GROUPS, generative=generative)
        assert report["verdict"] == report["generative"]["verdict"] == "investigate"
        assert (abs(report["delta"]) <= FORMAT_SHARE * abs(report["generative"]["delta"])) == (shape == "format")
        assert report["shape"] == shape
        said = " ".join(report_lines(report))
        assert ("Letter scoring moved too" in said) == (shape == "format")


def test_contamination_shape():
    public = clustered_pair(5, subject_sd=0.02, shift=0.3, shift_subjects=tuple(GROUPS))
    holdout = clustered_pair(1, subject_sd=0.0)
    assert compare(public, GROUPS, holdout=holdout)["shape"] == "contamination"


# -- the readers -----------------------------------------------------------------------------

def harness_files(role):
    return [(p.name, p.read_text()) for p in sorted((HARNESS / role).glob("samples_*.jsonl"))]


def test_harness_sample_logs_pair_by_task_and_doc_id():
    production, candidate = read_run(harness_files("production")), read_run(harness_files("candidate"))
    assert production.format == "harness" and len(production) == 6
    assert production.scores[("harness", "mmlu_abstract_algebra", 1)] == 0.0
    pair = pair_runs(production, candidate)
    assert sorted(set(pair["subjects"])) == ["abstract_algebra", "astronomy"]
    assert pair["baseline"] == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0] and pair["candidate"] == [0.0, 1.0, 0.0, 0.0, 1.0, 1.0]


def test_task_and_subject_names():
    assert task_of_file("out/samples_mmlu_astronomy_2024-06-01T10-00-00.123456.jsonl") == "mmlu_astronomy"
    assert task_of_file("results.jsonl") is None
    assert subject_of_task("mmlu_continuation_astronomy") == "astronomy"
    assert subject_of_task("mmlu_generative_high_school_physics") == "high_school_physics"
    # each benchmark's prefixes, the longest first: MMLU-Pro's task is not read as MMLU's "pro_law"
    assert (subject_of_task("mmlu_pro_law"), benchmark_of_task("mmlu_pro_law")) == ("law", "mmlu_pro")
    assert (benchmark_of_task("mmlu_astronomy"), benchmark_of_task("arc_easy")) == ("mmlu", None)


GOOD_HARNESS = '{"doc_id": 0, "doc": {}, "target": 0, "resps": [], "filtered_resps": [], "acc": 1.0}'


@pytest.mark.parametrize("name, text, message", [
    ("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", GOOD_HARNESS + "\n{not json", "line 2: not valid JSON"),
    ("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", "[1, 2]", "line 1: each line must be a JSON object"),
    ("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", '{"doc_id": 0, "doc": {}}', "line 1: a harness sample line needs"),
    ("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", '{"doc_id": -1, "acc": 1}', "line 1: 'doc_id' must be"),
    ("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", '{"doc_id": 0, "acc": 0.5}', "line 1: 'acc' must be 0 or 1"),
    ("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", GOOD_HARNESS + "\n" + GOOD_HARNESS, "line 2: question"),
    ("results.jsonl", GOOD_HARNESS, "line 1: no task"),
    ("run.jsonl", '{"subject": "anatomy", "split": "test", "correct": true}', "line 1: an evaluate line needs"),
    ("run.jsonl", '{"hello": 1}', "line 1: neither an evaluate line"),
    ("run.jsonl", "\n\n", "hold no questions"),
])
def test_malformed_lines_are_named(name, text, message):
    with pytest.raises(RunFormatError) as error:
        read_run([(name, text)])
    assert message in str(error.value) and (name in str(error.value) or "no questions" in message)


def test_two_formats_do_not_pair():
    evaluate_run = read_run([(EXAMPLE[0].name, text_of(EXAMPLE[0]))])
    with pytest.raises(RunFormatError, match="same tool"):
        pair_runs(evaluate_run, read_run(harness_files("production")))


# -- the command -----------------------------------------------------------------------------

def test_gate_command_on_the_published_runs(capsys):
    status = engine_main(["scoring-lesson", "gate", "--production", str(EXAMPLE[0]), "--candidate", str(EXAMPLE[1])])
    out = capsys.readouterr().out
    report = compare(example_pair())
    assert status == (1 if report["verdict"] == "investigate" else 0)
    assert f"paired delta {report['delta'] * 100:+.2f} points" in out
    assert f"clustered by subject {report['clustered_se'] * 100:.2f}" in out
    assert "Per-subject deltas" in out and "Shape:" in out
    assert "unreliable" not in out and not report["few_subjects"]  # 57 subjects
    assert f"Verdict: {report['verdict']} (|Δ| " in out and f"{report['critical']:.2f} × SE" in out


def test_gate_command_json_and_harness_files(capsys):
    args = ["scoring-lesson", "gate", "--json", "--production", *map(str, sorted((HARNESS / "production").glob("*"))),
            "--candidate", *map(str, sorted((HARNESS / "candidate").glob("*")))]
    assert engine_main(args) == 3  # too little data to decide: never 0, which a script would ship on
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 6 and report["verdict"] == "too little data" and report["shape"] == "undecided"
    assert report["questions_needed"] == math.ceil(6 * (report["band"] / 0.02) ** 2)
    # two subjects: the JSON flags the clustered error as unreliable and says what the verdict used
    assert report["subjects"] == 2 and report["df"] == 1 and report["few_subjects"] is True
    assert report["gate_se"] == max(report["clustered_se_cr1"], report["paired_se"])
    assert report["band"] == pytest.approx(report["critical"] * report["gate_se"])
    assert engine_main(args[:2] + args[3:]) == 3
    out = capsys.readouterr().out
    assert f"would take about {report['questions_needed']:,} questions in these 2 subjects" in out
    assert "Only 2 subjects: an error clustered by subject is unreliable" in out and "Student's t with 1 degree" in out


def test_gate_command_names_the_bad_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text_of(EXAMPLE[0]).splitlines()[0] + "\nnot json\n")
    assert engine_main(["scoring-lesson", "gate", "--production", str(bad), "--candidate", str(EXAMPLE[1])]) == 2
    assert f"{bad} line 2: not valid JSON" in capsys.readouterr().err
    assert engine_main(["scoring-lesson", "gate", "--production", str(tmp_path / "none.jsonl"),
                        "--candidate", str(EXAMPLE[1])]) == 2
    assert "cannot read it" in capsys.readouterr().err
    # python -m benchmarks gate: the same command, the old line its alias
    assert benchmarks_main(["gate", "--production", str(bad), "--candidate", str(EXAMPLE[1])]) == 2
    assert f"{bad} line 2: not valid JSON" in capsys.readouterr().err


def test_benchmark_commands_are_addressed_by_benchmark(capsys):
    """python -m benchmarks <benchmark> <command>, by lm-evaluation-harness's names: each benchmark's
    commands as its server package lists them; the documents' old command lines run the same ones."""
    for words, usage in ((["mmlu", "evaluate"], "python -m benchmarks mmlu evaluate"),
                         (["mmlu", "download"], "python -m benchmarks mmlu download"),
                         (["mmlu_pro", "conformance"], "python -m benchmarks mmlu_pro conformance"),
                         (["gate"], "python -m benchmarks gate")):
        with pytest.raises(SystemExit) as done:
            benchmarks_main([*words, "--help"])
        assert done.value.code == 0 and capsys.readouterr().out.startswith(f"usage: {usage} ")
    with pytest.raises(SystemExit):
        benchmarks_main(["mmlu-pro", "evaluate"])  # a document's slug is not a benchmark's name
    assert "invalid choice: 'mmlu-pro'" in capsys.readouterr().err


# -- the widget ------------------------------------------------------------------------------

def widget_context():
    return {"live_pairs": example_context(), "subject_groups": {}}


def test_widget_shows_the_example_and_loaded_harness_runs():
    view = run_view(WIDGET, {}, widget_context())
    assert view["numbers"]["delta"] == pytest.approx(compare(example_pair())["delta"])
    runs = {"production": [list(f) for f in harness_files("production")],
            "candidate": [list(f) for f in harness_files("candidate")]}
    loaded = run_view(WIDGET, {}, {**widget_context(), "runs": runs})
    assert loaded["numbers"]["n"] == 6 and loaded["summary"][1] == (
        "Your files: production samples_mmlu_abstract_algebra_2024-06-01T10-00-00.123456.jsonl and 1 more against "
        "candidate samples_mmlu_abstract_algebra_2024-06-02T10-00-00.654321.jsonl and 1 more, scored by the "
        "harness's acc.")
    assert loaded["numbers"]["few_subjects"] and any(line.startswith("Only 2 subjects") for line in loaded["summary"])
    assert not view["numbers"]["few_subjects"] and not any("unreliable" in line for line in view["summary"])


def test_widget_names_a_bad_line_and_draws_no_chart():
    runs = {"production": [["a.jsonl", "{oops"]], "candidate": [["b.jsonl", GOOD_HARNESS]]}
    view = run_view(WIDGET, {}, {**widget_context(), "runs": runs})
    assert "a.jsonl line 1: not valid JSON" in view["summary"][0] and view["error"] == view["summary"][0]
    assert "n" not in view["numbers"] and view["rows"] == []  # no silent fallback to the example
    assert not [m for m in view["figure"]["marks"] if m["tag"] == "rect"]


# -- the page --------------------------------------------------------------------------------

# The lesson's numbers and snippets are checked with every document's (tests/documents/test_numbers.py,
# tests/documents/test_snippets.py, parametrised over content/).
@pytest.fixture(scope="module")
def APP(real_app):
    return real_app


@pytest.fixture(scope="module")
def HTML(real_app):
    return real_app.test_client().get("/scoring-lesson/").get_data(as_text=True)


def test_the_lesson_has_the_ladder_widget_and_sources(APP, HTML):
    document = APP.extensions["content"].document("scoring-lesson")
    assert len(document.sections) >= 7
    for section in document.sections:
        if section.id != "glossary":
            assert 'class="rung' in section.html, section.id
    assert 'data-widget="two-run-gate"' in HTML and 'id="sources"' in HTML and "<math" in HTML


def test_counts_stated_on_the_page_are_recounted_from_the_files(HTML):
    counts = split_counts(mmlu_data_dir())
    assert counts["sizes"] == {"dev": 285, "val": 1531, "test": 14042}
    assert counts["duplicates"]["test"] == 105 and counts["repeated_questions"]["test"] == 173
    assert counts["shared"]["dev/test"] == 5 and counts["shared"]["val/test"] == 27
    for value in ("14,042", "1,531", "105", "173", "27"):
        assert value in HTML


def test_overlap_finds_a_pasted_test_question_and_misses_a_paraphrase():
    root = mmlu_data_dir()
    from benchmarks.mmlu.server.reader import MMLUData

    q = MMLUData(root).question("virology", "test", 3)
    found = overlap_with_test(root, "Here is a question I saw: " + q.question + " " + " ".join(q.choices))
    assert found[0] == {"subject": "virology", "index": 3, "overlap": 1.0}
    assert overlap_with_test(root, "Nothing like any exam question, just a sentence about lunch.") == []
    with pytest.raises(ValueError, match="paste"):
        overlap_with_test(root, "  ")


def test_the_lesson_widget_page_and_embed_render(APP):
    client = APP.test_client()
    for url in ("/scoring-lesson/widgets/two-run-gate", "/embed/scoring-lesson/two-run-gate?multiple=3",
                "/api/widgets/scoring-lesson/two-run-gate?multiple=9", "/scoring-lesson/widgets/micro-macro",
                "/embed/scoring-lesson/micro-macro?source=run-0-shot",
                "/api/widgets/scoring-lesson/micro-macro?source=nothing", "/scoring-lesson/widgets/",
                "/oembed?url=http://localhost/scoring-lesson/widgets/micro-macro&format=json"):
        response = client.get(url)
        assert response.status_code == 200, url


def test_micro_macro_on_table_1_and_the_published_run(APP):
    client = APP.test_client()
    table = client.get("/api/widgets/scoring-lesson/micro-macro?source=table-0").get_json()
    assert table["numbers"]["micro"] == pytest.approx(0.439, abs=0.0005)  # Table 1 reweighted by our sizes
    assert round(table["numbers"]["macro"] * 100, 1) == 44.2
    run = client.get("/api/widgets/scoring-lesson/micro-macro?source=run-0-shot").get_json()
    assert run["state"]["source"] == "run-0-shot" and run["numbers"]["parts"] == 57
    published = sorted(published_runs.RUNS_DIR.glob("*-0shot.jsonl.gz"))
    pair_rows = read_rows(published[0])  # the live model's whole 0-shot test run
    by_subject: dict = {}
    for row in pair_rows:
        by_subject.setdefault(row["subject"], []).append(row["correct"])
    assert run["numbers"]["micro"] == pytest.approx(sum(sum(v) for v in by_subject.values()) / len(pair_rows))
    assert run["numbers"]["macro"] == pytest.approx(float(np.mean([np.mean(v) for v in by_subject.values()])))


def test_overlap_page_counts_checks_and_escapes(APP):
    client = APP.test_client()
    page = client.get("/scoring-lesson/overlap").get_data(as_text=True)
    assert "14,042" in page and "105" in page
    found = client.post("/scoring-lesson/overlap", data={"text": "<script>x</script> " + (
        "Find all zeros in the indicated finite field of the given polynomial with coefficients in that field.")})
    assert found.status_code == 200
    body = found.get_data(as_text=True)
    assert "<script>x</script>" not in body and "&lt;script&gt;" in body and "abstract algebra, test question " in body
    assert client.post("/scoring-lesson/overlap", data={"text": " "}).status_code == 400
    assert client.post("/scoring-lesson/overlap", data={"text": "x" * 30_000}).status_code == 400


def test_widget_takes_the_optional_pairs_and_asks_for_both_halves():
    runs = {role: [list(f) for f in harness_files("production" if role.endswith("production") else "candidate")]
            for role in ("production", "candidate", "holdout_production", "holdout_candidate")}
    view = run_view(WIDGET, {}, {**widget_context(), "runs": runs})
    assert any(line.startswith("Held-out pair: delta") for line in view["summary"])
    half = {**runs, "generative_production": runs["production"]}
    view = run_view(WIDGET, {}, {**widget_context(), "runs": half})
    assert "load both the generative production and candidate runs" in view["summary"][0]


# -- one gate for both documents: the CLI's report, the four shapes, errors as errors --------

def test_the_command_and_both_widgets_give_the_same_report_on_the_same_files(capsys):
    from documents.mmlu.widgets.release_gate import WIDGET as MMLU_GATE

    from benchmarks.gate import report_lines

    paths = {role: sorted(map(str, (HARNESS / role).glob("samples_*.jsonl"))) for role in ("production", "candidate")}
    args = ["scoring-lesson", "gate", "--production", *paths["production"], "--candidate", *paths["candidate"]]
    assert engine_main([*args, "--json"]) == 3
    cli = json.loads(capsys.readouterr().out)
    assert engine_main(args) == 3
    cli_text = capsys.readouterr().out.split("\n\n")[0].splitlines()
    context = {**widget_context(), "subject_groups": mmlu_groups(),
               "runs": {role: [list(f) for f in harness_files(role)] for role in ("production", "candidate")}}
    for widget in (WIDGET, MMLU_GATE):
        view = run_view(widget, {}, context)
        assert view["numbers"] == {key: cli[key] for key in view["numbers"]}
        assert cli_text == report_lines(cli)
        # The widget's headline names the verdict and the shape; its lines say neither again. The
        # standard errors and the statistics the band rests on (CR1, Student's t) are for engineers,
        # behind their own fold, not in the reader's lines.
        lines = report_lines(cli, headline_given=True)
        assert view["for_engineers"] and set(view["for_engineers"]) < set(lines)
        assert view["summary"][2:-1] == [line for line in lines if line not in view["for_engineers"]]
        assert not any("CR1" in line or "Student's t" in line for line in view["summary"])
        assert [(r["subject"], r["delta"], r["n"]) for r in view["rows"]] == [
            (r["subject"].replace("_", " "), r["delta"], r["n"]) for r in cli["subject_rows"]]


def mmlu_groups():
    from benchmarks.mmlu.server import subject_groups

    return subject_groups(mmlu_data_dir(None))


@pytest.mark.parametrize("shape", ["noise", "knowledge", "format", "contamination"])
def test_each_shape_has_an_example_with_its_verdict_and_explanation(shape):
    from benchmarks.gate_widget import EXPLAIN, HYPOTHESIS

    view = run_view(WIDGET, {"source": shape}, {**widget_context(), "subject_groups": mmlu_groups()})
    assert view["messages"] == [] and view["numbers"]["shape"] == shape
    assert view["summary"][0].startswith(f"Verdict: {view['numbers']['verdict']}. Shape: ")
    assert view["summary"][1].startswith(("Simulated", "Part simulated", "Real runs"))  # says what is simulated
    if shape == "noise":
        assert view["summary"][-1] == EXPLAIN[shape]
    else:  # a shape the gate names is a hypothesis, and says so
        assert view["summary"][-1] == HYPOTHESIS
        assert view["summary"][-2] == EXPLAIN[shape] if shape != "format" else (
            # the published letter runs are at chance: the words say it shows the shape, not kept knowledge
            view["summary"][-2].startswith("What it means: written answers went from 24.8% to 2.3% while letter "
                                           "scores barely moved (24.8% to 23.1%). That is the shape of a format "
                                           "regression, but both letter runs are at chance"))
    if shape == "contamination":  # the public pair is the real published one
        assert view["numbers"]["delta"] == pytest.approx(compare(example_pair())["delta"])


def test_the_widget_says_its_verdict_shape_and_band_once_at_any_width():
    for multiple in (2, 2.5, 3, 4):  # at 1 standard error even true noise is past the gate
        view = run_view(WIDGET, {"source": "noise", "multiple": multiple}, widget_context())
        critical = f"{view['numbers']['critical']:.2f}"
        said = " ".join(view["summary"])
        assert view["summary"][0] == "Verdict: ship. Shape: noise."
        assert said.count(f"{critical} × SE") == 1 and f"≤ {critical} × SE" in said
        assert said.count("Verdict") == 1 and said.count("Shape") == 1
        assert "two standard errors" not in said.lower()


def test_a_pasted_line_that_is_wrong_is_an_error_and_no_chart():
    view = run_view(WIDGET, {}, {**widget_context(), "pasted": "anatomy, 1, 1\nanatomy, 2, 0\n"})
    assert view["error"].startswith("Could not read your runs: pasted line 2 should look like")
    assert view["rows"] == [] and not [m for m in view["figure"]["marks"] if m["tag"] == "rect"]
    good = run_view(WIDGET, {}, {**widget_context(), "pasted": "anatomy, 1, 1\nanatomy, 0, 1\nvirology, 1, 0\n"})
    assert "error" not in good and good["numbers"]["n"] == 3 and len(good["rows"]) == 2


def test_the_chart_ticks_are_round_and_a_subject_at_zero_shows():
    from widgetkit.charts import subject_delta_chart

    rows = [{"subject": "a", "delta": -0.081, "n": 10}, {"subject": "b", "delta": 0.0, "n": 10},
            {"subject": "c", "delta": 0.15, "n": 10}]
    fig = subject_delta_chart(rows, 0.02, 0.03, 2, "ship", 600)
    ticks = [m["text"] for m in fig["marks"] if m["tag"] == "text" and m["attrs"].get("text-anchor") == "end"
             and m["attrs"]["class"] == "fig-tick"]
    assert ticks == ["−15", "−10", "−5", "0", "+5", "+10", "+15"]  # round steps, not ±15, ±7.5
    bars = [m for m in fig["marks"] if m["tag"] == "rect" and m["attrs"]["class"].startswith("fig-bar")]
    assert len(bars) == 3 and all(float(b["attrs"]["height"]) >= 2 for b in bars)
    names = [m["text"] for m in fig["marks"] if m["tag"] == "text"]
    assert {"a", "b", "c"} <= set(names)  # few subjects: named under their bars


def test_micro_and_macro_part_on_the_simulated_example():
    from documents.scoring_lesson.widgets.micro_macro import WIDGET as MICRO_MACRO

    table = [{"model": "m", "humanities": 40.0, "social_sciences": 40.0, "stem": 40.0, "other": 40.0, "average": 40.0}]
    sizes = {"humanities": 10, "social_sciences": 10, "stem": 10, "other": 10}
    view = run_view(MICRO_MACRO, {"source": "simulated-skew"}, {"table_1": table, "group_sizes": sizes})
    assert view["numbers"]["micro"] - view["numbers"]["macro"] > 0.15  # several points apart
    assert "a simulated run, not real results" in view["summary"][0]


# Real lm_eval 0.4.13 --log_samples files (tools/harness_gate_logs.py): mmlu_<subject> (acc) and
# mmlu_<subject>_generative (exact_match) on the first 40 test questions of three subjects (3x40),
# and on the first 6 of the first 20 subjects (20x6).
GATE_LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "harness_gate"


def gate_logs(shots: int, generative: bool, which: str = "3x40") -> list[str]:
    return [str(p) for p in sorted((GATE_LOGS / which / f"{shots}shot").glob("samples_*.jsonl.gz"))
            if ("_generative_" in p.name) == generative]


def test_the_command_on_real_harness_logs_cannot_decide_on_three_subjects_of_forty(capsys):
    """The issue's new user: 0-shot as production, 5-shot as candidate, 120 questions. The band is far
    over ±5 points, so the verdict is "too little data" (exit 3), never "ship"."""
    args = ["scoring-lesson", "gate", "--production", *gate_logs(0, False), "--candidate", *gate_logs(5, False)]
    assert engine_main([*args, "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert (report["n"], report["subjects"], report["df"]) == (120, 3, 2)
    assert report["verdict"] == "too little data" and report["shape"] == "undecided"
    # 15.83% against 26.67%: +10.83 points inside a band of ±29.46 (Student's t with 2 degrees of freedom)
    assert round(report["delta"] * 100, 2) == 10.83 and round(report["band"] * 100, 2) == 29.46
    assert report["questions_needed"] == math.ceil(120 * (report["band"] / 0.02) ** 2 - 1e-9)
    assert engine_main(args) == 3
    out = capsys.readouterr().out
    assert "Verdict: too little data (|Δ| ≤ 4.53 × SE" in out and "Ship it" not in out
    assert f"would take about {report['questions_needed']:,} questions in these 3 subjects" in out


def test_mmlu_generative_logs_are_read_by_exact_match_and_show_the_format_shape(capsys):
    """The written-answers pair from the harness's mmlu_generative (exact_match, no acc): read in the
    command and the widget alike; dropping the worked examples is a format regression."""
    logs = {(shots, generative): gate_logs(shots, generative, "20x6") for shots in (0, 5) for generative in (False, True)}
    args = ["scoring-lesson", "gate", "--json", "--production", *logs[5, False], "--candidate", *logs[0, False],
            "--generative-production", *logs[5, True], "--generative-candidate", *logs[0, True]]
    engine_main(args)
    cli = json.loads(capsys.readouterr().out)
    generative = cli["generative"]
    assert generative["n"] == 120 and generative["subjects"] == 20
    assert generative["verdict"] == "investigate" and generative["delta"] < 0
    assert cli["shape"] == "format"
    runs = {role: [[Path(p).name.removesuffix(".gz"), gzip.decompress(Path(p).read_bytes()).decode()]
                   for p in logs[shots, generative]]
            for role, shots, generative in (("production", 5, False), ("candidate", 0, False),
                                            ("generative_production", 5, True), ("generative_candidate", 0, True))}
    view = run_view(WIDGET, {}, {**widget_context(), "runs": runs})
    assert view["numbers"] == {key: cli[key] for key in view["numbers"]}
    assert "scored by the harness's exact_match" in view["summary"][1]
    # letter and written answers in one run: refused, naming both metrics
    with pytest.raises(RunFormatError, match="scored by 'exact_match', but .* by 'acc'"):
        read_run([(Path(p).name.removesuffix(".gz"), gzip.decompress(Path(p).read_bytes()).decode())
               for p in gate_logs(0, False) + gate_logs(0, True)])


def test_a_cut_json_line_is_named_whole():
    with pytest.raises(RunFormatError, match=r"line 1: not valid JSON \(Unterminated string starting at column 30\)$"):
        read_run([("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", '{"doc_id": 0, "acc": 1, "x": "cut')])
    with pytest.raises(RunFormatError, match=r"not valid JSON \(Expecting value at column 1\)$"):
        read_run([("samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl", "oops")])
