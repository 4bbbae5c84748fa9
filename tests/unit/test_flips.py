"""Which questions flipped between two runs, and the letter a run leans on (issue 38): explainers.flips
against an independent recount, its counts against the release gate's on the published pair and on
harness --log_samples files, and the flips view's pairing, filters, pages and refusals."""
from __future__ import annotations

import functools
import gzip
import json
import re
import tomllib
from collections import Counter
from pathlib import Path

import pytest
from documents.mmlu.widgets.question_flips import LIVE_FORMS, WIDGET

from benchmarks.flips import harness_answer, pair_answers, read_answers
from benchmarks.flips_widget import PAGE_SIZE, live_address
from benchmarks.gate import compare
from benchmarks.live_runs import paired_marks
from benchmarks.mmlu.server import published_runs
from benchmarks.runs import RunFormatError, pair_runs, read_run
from explainers.flips import letter_lean, question_flips
from widgetkit import run_view

RUNS = published_runs.RUNS_DIR
HARNESS = Path(__file__).resolve().parents[1] / "fixtures" / "harness_samples"


@functools.cache  # each published file read once by the whole module (read-only rows)
def rows_of(name: str) -> list[dict]:
    with gzip.open(RUNS / name, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def published() -> dict:
    """Each published run's rows by (subject, index), read here without the project's readers."""
    return {shots: {(r["subject"], r["index"]): r for r in rows_of(f"smollm2-135m-instruct-{shots}shot.jsonl.gz")}
            for shots in (0, 5)}


def recount(before: dict, after: dict) -> dict:
    """An independent count of the flips: Counter over the shared questions, per subject and overall."""
    overall, by_subject = Counter(), {}
    for key in before.keys() & after.keys():
        a, b = before[key], after[key]
        kind = ("right_to_wrong" if a["correct"] and not b["correct"] else "wrong_to_right" if b["correct"] and not a["correct"]
                else "other_wrong" if not a["correct"] and a["prediction"] != b["prediction"] else "none")
        overall[kind] += 1
        by_subject.setdefault(key[0], Counter())[kind] += 1
    return {"overall": overall, "subjects": by_subject}


def test_published_flips_match_a_recount_and_the_gate(published):
    keys = sorted(published[0])
    before, after = (published[0][k] for k in keys), (published[5][k] for k in keys)
    before, after = list(before), list(after)
    counts = question_flips([float(r["correct"]) for r in before], [float(r["correct"]) for r in after],
                            [r["prediction"] for r in before], [r["prediction"] for r in after], [k[0] for k in keys])
    expected = recount(published[0], published[5])
    for kind in ("right_to_wrong", "wrong_to_right", "other_wrong"):
        assert counts[kind] == expected["overall"][kind]
        for subject, tally in counts["subjects"].items():
            assert tally[kind] == expected["subjects"][subject][kind], (subject, kind)
    # The gate's numbers on the same pair, as its widget gets them: the delta is net flips over questions.
    context = published_runs.widget_context(None)["live_pairs"]
    report = compare(paired_marks(context, "0-shot", "5-shot"))
    assert counts["n"] == report["n"] == 14_042
    assert counts["net"] == 234 and counts["delta"] == pytest.approx(report["delta"], abs=1e-15)
    gate_subjects = {row["subject"]: row for row in report["subject_rows"]}
    for subject, tally in counts["subjects"].items():
        assert tally["n"] == gate_subjects[subject]["n"]
        assert tally["net"] / tally["n"] == pytest.approx(gate_subjects[subject]["delta"], abs=1e-12), subject


@pytest.mark.parametrize(("shots", "favourite", "accuracy", "always"), [(0, "A", "23.10", "22.95"), (5, "C", "24.77", "25.51")])
def test_the_letter_each_published_run_leans_on(published, shots, favourite, accuracy, always):
    rows = list(published[shots].values())
    lean = letter_lean([r["prediction"] for r in rows], [r["key"] for r in rows])
    answered, keyed = Counter(r["prediction"] for r in rows), Counter(r["key"] for r in rows)
    top = answered.most_common(1)[0][0]
    assert lean["favourite"] == top == favourite
    assert lean["favourite_accuracy"] == keyed[top] / len(rows)
    assert lean["accuracy"] == sum(r["correct"] for r in rows) / len(rows)
    assert f"{100 * lean['accuracy']:.2f}" == accuracy and f"{100 * lean['favourite_accuracy']:.2f}" == always
    assert lean["predicted"] == {x: answered[x] / len(rows) for x in "ABCD"}
    assert lean["keys"] == {x: keyed[x] / len(rows) for x in "ABCD"}


def test_the_five_shot_generative_run_scores_the_same_as_the_letter_run():
    rows = rows_of("smollm2-135m-instruct-5shot-generative.jsonl.gz")
    lean = letter_lean([r["prediction"] for r in rows], [r["key"] for r in rows])
    assert f"{100 * lean['accuracy']:.2f}" == "24.77"
    assert lean["no_answer"] == sum(r["prediction"] is None for r in rows) / len(rows)


def harness_files(role: str) -> list[tuple[str, str]]:
    return [(path.name, path.read_text()) for path in sorted((HARNESS / role).glob("*.jsonl"))]


def test_harness_logs_flip_counts_equal_the_gates():
    production, candidate = harness_files("production"), harness_files("candidate")
    paired = pair_answers(read_answers(production), read_answers(candidate))
    before, after = zip(*paired["pairs"], strict=True)
    counts = question_flips([float(a.correct) for a in before], [float(b.correct) for b in after],
                            [a.answer for a in before], [b.answer for b in after], [a.subject for a in before])
    report = compare(pair_runs(read_run(production), read_run(candidate)))
    assert counts["n"] == report["n"] and counts["delta"] == pytest.approx(report["delta"], abs=1e-15)
    for row in report["subject_rows"]:
        assert counts["subjects"][row["subject"]]["net"] / row["n"] == pytest.approx(row["delta"], abs=1e-12)
    # The question text, its options and the key come from each line's doc; the answer is the option
    # with the highest log-likelihood, and its probability the softmax over the options.
    first = json.loads(production[1][1].splitlines()[0])
    answer = paired["pairs"][[a.question for a, _ in paired["pairs"]].index(first["doc"]["question"])][0]
    logs = [r[0] for r in first["filtered_resps"]]
    assert answer.choices == tuple(first["doc"]["choices"]) and answer.key == "ABCD"[first["doc"]["answer"]]
    assert answer.answer == "ABCD"[logs.index(max(logs))]
    assert sum(answer.probabilities.values()) == pytest.approx(1.0)
    # The view on the same files (as the page's worker makes it) states the same counts.
    view = run_view(WIDGET, {}, {"runs": {"production": [list(f) for f in production],
                                          "candidate": [list(f) for f in candidate]}})
    assert view["numbers"]["n"] == counts["n"] and view["numbers"]["net"] == counts["net"]
    assert "source=own" in view["rows"][0]["live"]  # a harness question goes to the form by its text


def test_runs_of_different_tools_are_matched_by_text_or_refused():
    harness = read_answers(harness_files("production"))
    own = [json.dumps({"subject": "astronomy", "split": "test", "index": i, "prediction": "A", "key": "B",
                       "correct": False, "probabilities": None}) for i in range(3)]
    evaluate = read_answers([("run.jsonl", "\n".join(own) + "\n")])
    with pytest.raises(RunFormatError, match="holds no question text"):
        pair_answers(harness, evaluate)
    # A letter task's logs against a generative task's: named differently, matched by subject and text.
    generative = []
    for name, text in harness_files("candidate"):
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        for line in lines:
            line.update(filtered_resps=["B"], resps=[["B"]])
        generative.append((name.replace("samples_mmlu_", "samples_mmlu_generative_"),
                           "\n".join(json.dumps(line) for line in lines) + "\n"))
    paired = pair_answers(harness, read_answers(generative))
    assert paired["matched_by"] == "text" and len(paired["pairs"]) == len(harness[1])
    assert all(b.answer == "B" and b.probabilities is None for _, b in paired["pairs"])


def test_published_view_filters_sorts_pages_and_links(real_app):
    with real_app.test_request_context():
        from engine.widgets import context_for

        paper = real_app.extensions["documents"]["mmlu"]
        context = context_for(paper, paper.widgets["question-flips"])
        everything = run_view(WIDGET, {}, context)
        assert everything["numbers"]["net"] == 234 and everything["pages"]["of"] == -(-9_670 // PAGE_SIZE)
        moved = [abs(row["moved"]) for row in everything["rows"]]
        assert moved == sorted(moved, reverse=True)
        row = everything["rows"][0]
        assert row["question"] and len(row["choices"]) == 4 and row["live"].startswith("/mmlu/run?subject=")
        lost = run_view(WIDGET, {"kind": "right_to_wrong", "letter": "C", "group": "STEM", "page": "2"}, context)
        assert lost["pages"]["page"] == 2 and lost["rows"]
        groups = context["subject_groups"]
        assert all(r["kind"] == "right_to_wrong" and "C" in {x["answer"] for x in r["runs"]}
                   and groups[r["subject"].replace(" ", "_")] == "STEM" for r in lost["rows"])
        assert lost["page_links"]["previous"].startswith("?") and "page=" not in lost["page_links"]["previous"]
        # A subject or group chosen: the chart and the first sentences are its own, its change the gate's for it.
        gate = compare(paired_marks(published_runs.widget_context(None)["live_pairs"], "0-shot", "5-shot"),
                       {s: g for s, g in context["subject_groups"].items()})
        mathematics = run_view(WIDGET, {"subject": "high_school_mathematics"}, context)
        delta = next(r["delta"] for r in gate["subject_rows"] if r["subject"] == "high_school_mathematics")
        assert f"a change of {100 * delta:+.2f} points" in mathematics["summary"][1]
        assert mathematics["figure"]["label"] == "How many questions flipped in high school mathematics, by kind"
        stem = run_view(WIDGET, {"group": "STEM"}, context)
        group = next(g for g in gate["groups"] if g["group"] == "STEM")
        assert f"over {group['n']:,}, a change of {100 * group['delta']:+.2f} points" in stem["summary"][1]
        same = run_view(WIDGET, {"production": "5-shot", "candidate": "5-shot"}, context)
        assert "a run has no flips against itself" in same["error"]
        bad = run_view(WIDGET, {"kind": "<script>", "page": "-3"}, context)
        assert bad["state"]["kind"] == "any" and bad["messages"]


def test_live_address_keeps_the_question():
    own = read_answers([("run.jsonl", json.dumps({"category": "law", "split": "test", "index": 4, "prediction": "C",
                                                   "key": "C", "correct": True, "shots": 5}) + "\n")])[1]
    assert live_address(next(iter(own.values())), LIVE_FORMS) == "/mmlu-pro/run?category=law&number=5&shots=5"


LEDGER_ENTRY = re.compile(r"^data: benchmarks/mmlu/runs/(?P<file>\S+\.jsonl\.gz), letter_lean (?P<key>\w+)")
LEDGERS = [Path(__file__).resolve().parents[2] / "content" / slug / "numbers.toml" for slug in ("mmlu", "scoring-lesson")]


@pytest.mark.parametrize("ledger", LEDGERS, ids=lambda path: path.parent.name)
def test_the_ledgers_letter_numbers_are_recounted_from_the_run_files_they_name(ledger):
    """Each ledger number whose source is a published run's letter_lean is that run's, recounted here
    (a generative run the source names too gives the same number)."""
    entries = [e for e in tomllib.loads(ledger.read_text())["cited"] if LEDGER_ENTRY.match(e["source"])]
    assert {e["value"] for e in entries} == {"23.10", "22.95", "24.77", "25.51"}
    for entry in entries:
        found = LEDGER_ENTRY.match(entry["source"])
        for name in {found["file"], *re.findall(r"benchmarks/mmlu/runs/(\S+\.jsonl\.gz)", entry["source"])}:
            rows = rows_of(name)
            lean = letter_lean([r["prediction"] for r in rows], [r["key"] for r in rows])
            assert f"{100 * lean[found['key']]:.2f}" == entry["value"], (name, entry)


REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "harness_reference"


def log_samples(mmlu_data, shots: int, method: str, task: str = "mmlu_{}") -> list[tuple[str, str]]:
    """lm-evaluation-harness 0.4.13 --log_samples files, one per subject, made of the harness's own
    samples kept in tests/fixtures/harness_reference (doc_id, target, resps, filtered_resps and the
    metric as it wrote them) with each line's ``doc`` as the harness writes it (cais/mmlu's row: the
    question, subject, choices and answer, here from the MMLU test file the sample names)."""
    samples = json.loads((REFERENCE / f"{shots}shot-plain.json").read_text())["samples"][method]
    files: dict[str, list[str]] = {}
    for sample in samples:
        question = mmlu_data.question(sample["subject"], "test", sample["index"])
        doc = {"question": question.question, "subject": sample["subject"], "choices": list(question.choices),
               "answer": "ABCD".index(question.answer)}
        line = {"doc_id": sample["doc_id"], "doc": doc, "target": sample["target"],
                **{key: sample[key] for key in ("resps", "filtered_resps", "acc")}}
        files.setdefault(sample["subject"], []).append(json.dumps(line))
    return [(f"samples_{task.format(subject)}_2026-12-06T10-00-00.000000.jsonl", "\n".join(lines) + "\n")
            for subject, lines in files.items()]


def test_real_harness_logs_flip_counts_equal_the_gates(mmlu_data):
    """lm_eval 0.4.13's own samples of the live model, 0-shot against 5-shot letter scoring: the net
    flips over the paired questions are the gate's delta, overall and per subject."""
    production, candidate = log_samples(mmlu_data, 0, "letter"), log_samples(mmlu_data, 5, "letter")
    paired = pair_answers(read_answers(production), read_answers(candidate))
    before, after = zip(*paired["pairs"], strict=True)
    counts = question_flips([float(a.correct) for a in before], [float(b.correct) for b in after],
                            [a.answer for a in before], [b.answer for b in after], [a.subject for a in before])
    report = compare(pair_runs(read_run(production), read_run(candidate)))
    assert (counts["n"], paired["dropped"]) == (report["n"], report["dropped"]) == (6, 2)
    assert counts["delta"] == report["delta"] == 1 / 6
    for row in report["subject_rows"]:
        assert counts["subjects"][row["subject"]]["net"] / row["n"] == row["delta"]
    # The harness's acc is whether the option with the highest log-likelihood is the key.
    assert all(a.correct == (a.answer == a.key) for a in (*before, *after))


def test_a_letter_task_against_a_continuation_task_is_matched_by_question_text(mmlu_data):
    """The harness names a question by its task, so two tasks' logs share no question: the flips view
    matches them by subject and text, where the gate finds nothing to pair."""
    letter = log_samples(mmlu_data, 0, "letter")
    option = log_samples(mmlu_data, 5, "option", task="mmlu_continuation_{}")
    with pytest.raises(RunFormatError, match="share 0 question"):
        pair_runs(read_run(letter), read_run(option))
    paired = pair_answers(read_answers(letter), read_answers(option))
    assert paired["matched_by"] == "text" and len(paired["pairs"]) == 6
    reference = {(shots, method): {(s["subject"], s["index"]): s["acc"] for s in
                                   json.loads((REFERENCE / f"{shots}shot-plain.json").read_text())["samples"][method]}
                 for shots, method in ((0, "letter"), (5, "option"))}
    for before, after in paired["pairs"]:  # each pair is one question, scored as each log says
        assert before.question == after.question and before.subject == after.subject
        index = [q.question for q in mmlu_data.questions(after.subject, "test")].index(after.question)
        assert before.correct == (reference[(0, "letter")][(before.subject, index)] == 1.0)
        assert after.correct == (reference[(5, "option")][(after.subject, index)] == 1.0)


@pytest.mark.parametrize(("slug", "gate"), [("mmlu", "release-gate"), ("scoring-lesson", "two-run-gate")])
def test_each_gate_links_to_its_documents_flips_view(real_app, slug, gate):
    client = real_app.test_client()  # the gate's own page (the document page draws the same template inline)
    page = client.get(f"/{slug}/widgets/{gate}").get_data(as_text=True)
    assert f'<p class="gate-flips-link"><a href="/{slug}/widgets/question-flips">' in page
    flips = client.get(f"/{slug}/widgets/question-flips?kind=wrong_to_right&page=3")
    assert flips.status_code == 200
    html = flips.get_data(as_text=True)
    assert html.count('class="flip-card flip-wrong_to_right"') == PAGE_SIZE and 'rel="prev"' in html


def test_a_generative_harness_line_is_read_as_its_filtered_letter():
    """lm_eval 0.4.13's mmlu_generative sample: its target is the key's letter and its filtered
    response the answer; it has no probabilities (the gate reads its exact_match)."""
    sample = json.loads((REFERENCE / "5shot-plain.json").read_text())["samples"]["generative"][0]
    answer = harness_answer({**sample, "doc": {"question": "q", "choices": ["a", "b", "c", "d"], "answer": 1}},
                            sample["subject"], sample["exact_match"] == 1.0)
    assert (answer.key, answer.answer, answer.probabilities, answer.correct) == ("B", "C", None, False)
