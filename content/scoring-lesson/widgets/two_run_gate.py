"""Two-run gate: the release gate on two real runs (the live model's published ones, or files a reader loads).

The reader's files are parsed here, by the same ``runs`` module the command line uses, so the
browser and ``python -m engine scoring-lesson gate`` read a file the same way and fail on the same
line with the same message.
"""
from __future__ import annotations

from benchmarks.gate import compare, report_lines
from benchmarks.mmlu.live_runs import live_pairs, model_name, paired_marks, run_of, run_pair
from benchmarks.runs import RunFormatError, pair_runs, read_run
from explainers import checks
from widgetkit import Param, Widget
from widgetkit.charts import subject_delta_chart
from widgetkit.context import MAX_QUESTIONS

ROLES = ("production", "candidate", "generative_production", "generative_candidate",
         "holdout_production", "holdout_candidate")
MAX_TEXT = 64 * MAX_QUESTIONS * 16  # characters in all loaded files together (a harness line is long)


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


def groups_check(name: str, value: object) -> dict:
    found = checks.mapping(name, value, minimum=0)
    for subject, group in found.items():
        checks.text(f"{name}[{subject!r}]", group)
    return found


def params(context: dict) -> tuple[Param, ...]:
    return (Param("multiple", "Gate width, in standard errors", "number", 2.0, 1.0, 4.0, 0.5,
                  help="Investigate when the delta is beyond this many standard errors (on the normal curve; "
                       "Student's t widens it for few subjects)."),)


def _pairs(runs: dict) -> tuple[dict, dict | None, dict | None]:
    def pair(prefix: str) -> dict | None:
        production, candidate = runs.get(f"{prefix}production"), runs.get(f"{prefix}candidate")
        if bool(production) != bool(candidate):
            raise RunFormatError(f"load both the {prefix.replace('_', ' ')}production and candidate runs, or neither")
        if not production:
            return None
        return pair_runs(read_run([tuple(f) for f in production]), read_run([tuple(f) for f in candidate]))

    main = pair("")
    if main is None:
        raise RunFormatError("load a production run and a candidate run")
    return main, pair("generative_"), pair("holdout_")


def _figure(report: dict, width: int) -> dict:
    verdict = "investigate" if report["verdict"] == "investigate" else "ship"
    return subject_delta_chart(report["subject_rows"], report["delta"], report["band"], report["multiple"], verdict,
                               width, band_label(report))


def band_label(report: dict) -> str:
    """The band's name in the chart's key: how many of which error it spans."""
    error = "paired" if report["gate_se_basis"] == "paired" else "clustered"
    return f"± {report['critical']:.2f} {error} standard errors"


def view(state: dict, context: dict) -> dict:
    problem = None
    groups = context.get("subject_groups") or {}
    main = generative = holdout = None
    if context.get("runs"):
        try:
            main, generative, holdout = _pairs(context["runs"])
            source = "Your loaded runs."
        except (RunFormatError, ValueError) as error:
            problem = f"Could not use the loaded runs: {error}. Showing the example instead."
    if main is None:
        example = context["example"]
        # The live model's published pair (benchmarks/mmlu/runs/), as the MMLU paper's release gate takes it.
        pair = run_pair(example)
        main = paired_marks(example, *pair)
        production, candidate = (run_of(example, key) for key in pair)
        source = (f"The example: {model_name(example['model'])} (this site's live model) over the whole MMLU test "
                  f"({production['questions']:,} questions): its {production['key']} run (production) against "
                  f"its {candidate['key']} run (candidate).")
    report = compare(main, groups, generative, holdout, state["multiple"])
    summary = ([problem] if problem else []) + [source] + report_lines(report)
    return {
        "summary": summary,
        "figure": _figure(report, state["width"]),
        "numbers": {key: report[key] for key in ("n", "delta", "naive_se", "paired_se", "clustered_se",
                                                  "clustered_se_cr1", "subjects", "df", "few_subjects", "gate_se",
                                                  "gate_se_basis", "critical", "band", "p_value", "verdict", "shape",
                                                  "dropped")},
    }


WIDGET = Widget(
    name="two-run-gate",
    title="The release gate on two runs",
    blurb="Drop in two evaluate or lm-evaluation-harness runs: paired delta, clustered error bar, verdict and shape.",
    height=1000, params=params, view=view,
    needs={"example": live_pairs}, accepts={"runs": loaded_runs, "subject_groups": groups_check}, script=True,
)
