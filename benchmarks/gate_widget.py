"""The release gate as one widget, for every document that shows it: its settings, its examples and
its view. Sans I/O: it runs in the reader's browser (Pyodide) as well as on the server.

The document says what its examples are drawn from (:class:`GateExamples`): the benchmark whose
runs it shows (MMLU in this site's documents) and a held-out set for the contamination example
(MMLU-Pro's categories); the words name them by their tasks' titles (benchmarks/registry.py).
What a reader can look at (the ``source`` setting):

- ``simulated``: a simulated pair over the benchmark's test subjects, with the settings below it;
- ``live``: the live model's published letter runs, 0-shot (production) against 5-shot (candidate),
  as they are (the ``live_pairs`` context, benchmarks/live_runs.py);
- one example per dashboard shape (``benchmarks.gate.SHAPES``): ``noise``, ``knowledge``,
  ``format`` (the published letter and generative runs at 5 shots against 0: real), ``contamination`` (the published
  letter pair as the public set, with a simulated held-out pair on the held-out benchmark's groups,
  as its published run samples them: no second run of it is published). Each says which parts are
  simulated.

A reader's own runs come as context, read in the page and sent nowhere: ``runs`` (files per role,
parsed by ``benchmarks.runs`` exactly as ``python -m benchmarks gate`` parses them),
``pasted`` ("subject, production, candidate" lines) or ``results`` (already paired). The report
is ``benchmarks.gate.compare``'s, the same the command prints; a file that cannot be read gives an
error (``view["error"]``) and an empty chart, never the example in its place.
"""
from __future__ import annotations

import math
from statistics import NormalDist

from explainers import checks, student_t_quantile
from explainers.stats import MAX_DEGREES_OF_FREEDOM
from widgetkit import Param, Widget
from widgetkit.charts import subject_delta_chart
from widgetkit.context import MAX_QUESTIONS, paired_results, sizes
from widgetkit.scene import figure, label

from .gate import compare, error_lines, report_lines
from .gate_examples import PUBLISHED, SIMULATED, GateExamples, example
from .live_runs import GENERATIVE, live_pairs, run_pair
from .runs import MAX_FILE_LINES, RunFormatError, count_line_breaks, pair_runs, read_run, too_many_lines

ROLES = ("production", "candidate", "generative_production", "generative_candidate",
         "holdout_production", "holdout_candidate")
MAX_TEXT = 64 * MAX_QUESTIONS * 16  # characters in all loaded files together (a harness line is long)
SHAPE_EXAMPLES = ("noise", "knowledge", "format", "contamination")

SHAPE_NAMES = {"noise": "noise", "undecided": "none: too little data to tell",
               "knowledge": "knowledge regression (or gain)", "format": "format regression",
               "contamination": "contamination signature", "unexplained": "none of the four fits"}
HEADLINE_VERDICTS = {"ship": "ship", "investigate": "investigate", "too little data": "too little data to decide"}
# What each shape means for the reader, in words a newcomer follows (the format shape's depends on
# whether letter scoring is above chance: format_words).
EXPLAIN = {
    "noise": "What it means: the two models differ by less than the question-to-question luck of one run. "
             "Ship the candidate.",
    "undecided": "What it means: these runs are too small to tell a drop of several points from luck, so the "
                 "gate cannot say ship. Score more questions (or more subjects) and compare again.",
    "knowledge": "What it means: one group of subjects lost (or gained) questions together while the rest "
                 "held, as when new training data crowded out what the model knew about that group. Look at "
                 "that group's subjects before shipping.",
    "contamination": "What it means: the score rose on the public questions but not on held-out ones (questions "
                     "that are not public, so they cannot have been in the training data). A rise only where the "
                     "answers are on the internet is a sign the test leaked into training: do not trust the "
                     "public gain.",
    "unexplained": "What it means: the change is real, but none of the four shapes fits it: a person "
                   "should read the subjects that moved.",
}
HYPOTHESIS = ("A shape is a hypothesis for a person to check, not a finding: the gate looks at a few numbers "
              "only.")


def above_chance(accuracy: float, n: int, chance: float) -> bool:
    """Whether an accuracy over ``n`` questions is more than two standard errors of a guesser above
    ``chance`` (one in four on four options): chance + 2 √(chance (1 − chance) / n)."""
    return accuracy > chance + 2 * math.sqrt(chance * (1 - chance) / n)


def format_words(report: dict, chance: float) -> str:
    """What a format regression means, by whether letter scoring shows knowledge to keep."""
    production, candidate = report["production_accuracy"], report["candidate_accuracy"]
    generative = report["generative"]
    held = "did not drop" if candidate >= production else "barely moved"
    collapse = (f"written answers went from {generative['production_accuracy'] * 100:.1f}% to "
                f"{generative['candidate_accuracy'] * 100:.1f}% while letter scores {held} "
                f"({production * 100:.1f}% to {candidate * 100:.1f}%)")
    if above_chance(production, report["n"], chance) and above_chance(candidate, report["n"], chance):
        return (f"What it means: {collapse}. The model still picks the right letter when asked for its "
                f"probabilities, above the {chance:.0%} of a guess, but its written answers are scored wrong. "
                f"That is usually the prompt's format (a chat template, a stop sequence), not lost knowledge: "
                f"fix the format and score again.")
    return (f"What it means: {collapse}. That is the shape of a format regression, but both letter runs are "
            f"at chance (a guess gets {chance:.0%}), so there is no knowledge here to keep: this shows the shape, "
            f"not a model that kept what it knew. Check the prompt's format (a chat template, a stop sequence) "
            f"before calling anything lost.")


def explain(report: dict, chance: float) -> list[str]:
    """The shape's meaning for the reader, and for a shape the gate names, that it is a hypothesis."""
    shape = report["shape"]
    words = format_words(report, chance) if shape == "format" else EXPLAIN[shape]
    return [words] if shape in ("noise", "undecided") else [words, HYPOTHESIS]


# -- context checks --------------------------------------------------------------------------

def loaded_runs(name: str, value: object) -> dict:
    """Files a reader loaded: {role: [[file name, text], ...]} for the roles in ROLES."""
    runs = checks.mapping(name, value)
    total = 0
    for role, files in runs.items():
        if role not in ROLES:
            raise ValueError(f"{name} has an unknown role {role!r}; use {', '.join(ROLES)}")
        if not isinstance(files, list) or not files:
            raise ValueError(f"{name}.{role} must be a non-empty list of [file name, text] pairs")
        for i, item in enumerate(files):
            if not (isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item)):
                raise ValueError(f"{name}.{role}[{i}] must be [file name, text]")
            total += len(item[1])
    if total > MAX_TEXT:
        raise ValueError(f"{name} holds more than {MAX_TEXT:,} characters")
    return runs


def pasted_text(name: str, value: object) -> str:
    """Pasted "subject, production, candidate" lines (parsed by the view, which names a bad line)."""
    if not isinstance(value, str) or len(value) > 64 * MAX_QUESTIONS:
        raise ValueError(f"{name} must be text of at most {64 * MAX_QUESTIONS:,} characters")
    return value


def groups_check(name: str, value: object) -> dict:
    found = checks.mapping(name, value, minimum=0)
    for subject, group in found.items():
        checks.text(f"{name}[{subject!r}]", group)
    return found


# -- settings --------------------------------------------------------------------------------

def source_choices(context: dict) -> tuple[tuple[str, str], ...]:
    pair = run_pair(context.get("live_pairs"))
    # Labels short enough to show whole in a 320 px screen's select (tests/browser/live-form.test.mjs).
    published = ((PUBLISHED, f"our runs, {pair[1]} vs {pair[0]}"),) if pair else ()
    return ((SIMULATED, "simulated (settings below)"), *published,
            ("noise", "noise, simulated"),
            ("knowledge", "knowledge drop, simulated"),
            ("format", "format drop, real runs" if run_pair(context.get("live_pairs"), GENERATIVE)
             else "format drop, simulated"),
            ("contamination", "contamination, part real" if pair else "contamination, simulated"))


def params(context: dict, default: str = SIMULATED) -> tuple[Param, ...]:
    choices = source_choices(context)
    if default not in dict(choices):
        default = SIMULATED
    return (
        Param("source", "Which two runs", "choice", default, choices=choices),
        Param("multiple", "Gate width, in standard errors", "number", 2.0, 1.0, 4.0, 0.5,
              help="Investigate when the delta is beyond this many standard errors (on the normal curve; "
                   "Student's t widens it for few subjects)."),
        Param("delta", "True change, candidate minus production", "number", -0.008, -0.05, 0.05, 0.001, percent=True,
              unit="points"),
        Param("corr", "Correlation between the two models' answers", "number", 0.6, 0.0, 0.95, 0.05),
        Param("spread", "How much subjects differ in their change", "number", 0.02, 0.0, 0.1, 0.005, percent=True,
              unit="points"),
        Param("base", "Production model's accuracy", "number", 0.85, 0.3, 0.95, 0.01, percent=True),
        Param("draw", "Random draw", "int", 1, 1, 999, 1, help="Another draw of the simulated questions."),
    )


# -- a reader's own runs ---------------------------------------------------------------------

def parse_pasted(text: str) -> dict:
    """Pasted "subject, production, candidate" lines (1 right, 0 wrong), as a paired run."""
    if count_line_breaks(text) > MAX_FILE_LINES:
        raise too_many_lines("the pasted text")
    subjects, baseline, candidate = [], [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.replace(";", ",").replace("\t", ",").split(",")]
        if len(parts) != 3 or not parts[0] or parts[1] not in ("0", "1") or parts[2] not in ("0", "1"):
            raise RunFormatError(f"pasted line {number} should look like “anatomy, 1, 0” (subject, production, "
                                 f"candidate), got {line.strip()[:80]!r}")
        subjects.append(parts[0])
        baseline.append(int(parts[1]))
        candidate.append(int(parts[2]))
    if len(subjects) < 2:
        raise RunFormatError("paste at least two lines, one question each")
    return {"subjects": subjects, "baseline": baseline, "candidate": candidate}


def loaded_pairs(runs: dict) -> tuple[dict, dict | None, dict | None]:
    """The main pair and the optional generative and held-out pairs from a reader's files; each pair
    notes its files (``files``: {"production", "candidate"}, their names) and what scores it (``metric``)."""
    def pair(prefix: str) -> dict | None:
        production, candidate = runs.get(f"{prefix}production"), runs.get(f"{prefix}candidate")
        if bool(production) != bool(candidate):
            raise RunFormatError(f"load both the {prefix.replace('_', ' ')}production and candidate runs, or neither")
        if not production:
            return None
        first = read_run([tuple(f) for f in production])
        return {**pair_runs(first, read_run([tuple(f) for f in candidate])), "metric": first.metric,
                "files": {"production": [f[0] for f in production], "candidate": [f[0] for f in candidate]}}

    main = pair("")
    if main is None:
        raise RunFormatError("load a production run and a candidate run")
    return main, pair("generative_"), pair("holdout_")


def file_names(names: list[str]) -> str:
    """A run's files as the reader chose them: one name, or the first and how many more."""
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"


def loaded_words(main: dict, generative: dict | None, holdout: dict | None) -> str:
    """What is drawn, naming the reader's files and what scored them."""
    def which(pair: dict, what: str) -> str:
        metric = "" if pair["metric"] == "correct" else f", scored by the harness's {pair['metric']}"
        return (f"{what}: production {file_names(pair['files']['production'])} against candidate "
                f"{file_names(pair['files']['candidate'])}{metric}")
    parts = [which(main, "Your files")]
    if generative:
        parts.append(which(generative, "written answers"))
    if holdout:
        parts.append(which(holdout, "held-out questions"))
    return "; ".join(parts) + "."


# -- the view --------------------------------------------------------------------------------

def band_label(report: dict) -> str:
    """The band's name in the chart's key: the gate's width as the setting states it, and the band."""
    return f"gate width {report['multiple']:g}: ± {report['band'] * 100:.2f} points"


def error_view(message: str, width: int, pasted: bool = False) -> dict:
    """A file or paste that cannot be read: the error, and an empty chart (never the example). The
    error also shows by the file inputs (or the paste box), in the controls, which the page draws
    below the chart (widgets.css: figures first)."""
    text = f"Could not read your runs: {message}"
    where = "by the paste box" if pasted else "by the file inputs"
    return {
        "summary": [text, f"Nothing is drawn until both runs can be read (the same message is below, {where}); "
                          f"fix the file or choose another."],
        "figure": figure(width, 60, "No chart: the loaded runs could not be read",
                         [label(width / 2, 34, f"No chart: the error is below, {where}", "fig-caption")]),
        "numbers": {"error": message},
        "rows": [],
        "error": text,
    }


def band_widths(report: dict, setting: Param) -> list[tuple[float, float]]:
    """(gate width in standard errors, the band it gives) at each of the setting's steps: the band
    is Student's t at the level that width has on the normal curve, times the gate's error, as in
    ``explainers.gate_verdict``. Empty with a single subject (no t to take)."""
    df = min(report["df"], MAX_DEGREES_OF_FREEDOM)
    if df < 1 or not report["gate_se"] > 0:
        return []
    count = round((setting.maximum - setting.minimum) / setting.step)
    widths = [setting.minimum + i * setting.step for i in range(count + 1)]
    return [(m, student_t_quantile(NormalDist().cdf(m), df) * report["gate_se"]) for m in widths]


def evidence(report: dict, groups: dict[str, str]) -> dict:
    """What the chart draws besides the subjects, so that the shape it names shows: the bars coloured
    by group for a knowledge regression; each pair's change and band, the letter pair beside the
    written answers', the public beside the held-out, whenever those pairs are given."""
    found: dict = {}
    if report["shape"] == "knowledge":
        found["groups"] = groups
    second = [(name, report[key]) for name, key in (("written answers", "generative"), ("held-out", "holdout"))
              if report[key]]
    if second:
        first = "letter scoring" if report["generative"] else "public"
        found["pairs"] = [(first, report["delta"], report["band"]),
                          *((name, pair["delta"], pair["band"]) for name, pair in second)]
    return found


def view(state: dict, context: dict, examples: GateExamples) -> dict:
    multiple = state["multiple"]
    groups = context.get("subject_groups") or {}
    try:
        if context.get("runs"):
            main, generative, holdout = loaded_pairs(context["runs"])
            source = loaded_words(main, generative, holdout)
        elif context.get("pasted") is not None:
            main, generative, holdout = parse_pasted(context["pasted"]), None, None
            source = f"Your pasted results ({len(main['subjects']):,} questions)."
        elif context.get("results"):
            main, generative, holdout = context["results"], None, None
            source = f"Your loaded results ({len(main['subjects']):,} questions)."
        else:
            main, generative, holdout, groups, source = example(state["source"], state, context, examples)
        report = compare(main, groups, generative, holdout, multiple)
    except (RunFormatError, ValueError) as error:
        return error_view(str(error), state["width"], pasted=not context.get("runs"))
    verdict = report["verdict"]
    for_engineers = error_lines(report)  # behind the summary's fold for engineers
    summary = [f"Verdict: {HEADLINE_VERDICTS[verdict]}. Shape: {SHAPE_NAMES[report['shape']]}.", source,
               *[line for line in report_lines(report, headline_given=True) if line not in for_engineers],
               *explain(report, examples.chance)]
    rows = [{"subject": r["subject"].replace("_", " "), "delta": r["delta"], "n": r["n"]}
            for r in report["subject_rows"]]
    setting = {p.name: p for p in params(context)}["multiple"]
    bands = band_widths(report, setting)
    return {
        "summary": summary,
        "for_engineers": for_engineers,
        "figure": subject_delta_chart(report["subject_rows"], report["delta"], report["band"], multiple, verdict,
                                      state["width"], band_label(report), (setting, bands) if bands else None,
                                      **evidence(report, groups)),
        "rows": rows,
        "numbers": {key: report[key] for key in (
            "n", "delta", "naive_se", "paired_se", "clustered_se", "clustered_se_cr1", "subjects", "df",
            "few_subjects", "gate_se", "gate_se_basis", "critical", "band", "p_value", "verdict", "shape",
            "dropped", "questions_needed")},
    }


def gate_widget(name: str, title: str, blurb: str, examples: GateExamples, default: str = SIMULATED,
                height: int = 1000) -> Widget:
    """The gate as a document's widget ``name``; ``examples``: what its examples are drawn from;
    ``default``: the source shown first."""
    return Widget(
        name=name, title=title, blurb=blurb, height=height,
        params=lambda context: params(context, default), view=lambda state, context: view(state, context, examples),
        accepts={"live_pairs": live_pairs, "subject_sizes": sizes, "subject_groups": groups_check,
                 "runs": loaded_runs, "pasted": pasted_text, "results": paired_results},
        script=True,
    )
