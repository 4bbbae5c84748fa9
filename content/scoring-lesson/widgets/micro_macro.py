"""Micro against macro: the same results averaged per question and per subject (or group).

Two kinds of real results: the paper's Table 1 (group scores, weighted by our copy's group sizes)
and the live model's published runs of the whole test set (per-subject counts), where the two averages
nearly agree; and one simulated run (said so) where they differ by many points, because its large
subjects are its easy ones. Sizes are what make the two averages differ; the figure draws each
part's accuracy with its size.
"""
from __future__ import annotations

from benchmarks.live_runs import live_scores, model_name, run_of
from explainers import checks, plain_mean, weighted_accuracy
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.layout import GAP, wrap
from widgetkit.scene import Linear, Placer, Rows, figure, percent_axis_x, rect


def table_rows(name: str, value: object) -> list[dict]:
    """Table 1's rows: [{"model", "humanities", "social_sciences", "stem", "other", "average"}] in points."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{name} must be a non-empty list of rows")
    for i, row in enumerate(value):
        checks.mapping(f"{name}[{i}]", row)
        checks.text(f"{name}[{i}].model", row.get("model"))
    return value


GROUP_KEYS = ("humanities", "social_sciences", "stem", "other")


def _sources(context: dict) -> tuple[tuple[str, str], ...]:
    """(value, label) for each choice: Table 1's rows, then the published runs."""
    runs = context.get("live_scores") or {"runs": []}
    return (tuple((f"table-{i}", f"Table 1: {row['model']}") for i, row in enumerate(context["table_1"]))
            + tuple((f"run-{run['key']}", f"Our model, {run['key']}, by subject")
                    for run in runs["runs"])
            + (("simulated-skew", "simulated: big subjects easy"),))


# The simulated example where the two averages part: three large subjects the model finds easy and
# five small ones it finds hard (made-up sizes and accuracies, said so on the page).
SKEWED = (("big subject 1", 1500, 0.80), ("big subject 2", 900, 0.75), ("big subject 3", 600, 0.70),
          ("small subject 1", 100, 0.35), ("small subject 2", 100, 0.30), ("small subject 3", 100, 0.40),
          ("small subject 4", 100, 0.30), ("small subject 5", 100, 0.35))


def params(context: dict) -> tuple[Param, ...]:
    sources = _sources(context)
    # It opens on the simulated run, where the two averages are far apart (real results part by a
    # few tenths of a point, which shows only that they can agree); the real ones are a choice away.
    return (Param("source", "Results to average", "choice", "simulated-skew", choices=sources),)


def _parts(state: dict, context: dict) -> tuple[list[tuple[str, int, float]], float | None, str]:
    """(name, questions, accuracy) per part, the published average if any, and a description."""
    kind, _, which = state["source"].partition("-")
    if kind == "simulated":
        return list(SKEWED), None, ("a simulated run, not real results: three large subjects the model finds easy "
                                    "and five small ones it finds hard")
    if kind == "run":
        runs = context["live_scores"]
        run = run_of(runs, which)
        parts = [(s.replace("_", " "), n, right / n) for s, (right, n) in sorted(run["subjects"].items())]
        return parts, None, (f"{model_name(runs['model'])}'s published {which} run over all "
                             f"{run['questions']:,} test questions (per subject)")
    row = context["table_1"][int(which)]
    group_sizes = context["group_sizes"]
    parts = [(key.replace("_", " "), group_sizes[key], row[key] / 100) for key in GROUP_KEYS]
    return parts, row["average"] / 100, f"Table 1's {row['model']} (per group, weighted by our copy's test sizes)"


def view(state: dict, context: dict) -> dict:
    parts, published, where = _parts(state, context)
    counts, accs = [n for _, n, _ in parts], [a for _, _, a in parts]
    micro, macro = weighted_accuracy(counts, accs), plain_mean(accs)
    summary = [
        f"From {where}: micro-average {micro * 100:.1f}% (every question counts once), "
        f"macro-average {macro * 100:.1f}% (every part counts once); they differ by {(micro - macro) * 100:+.1f} points.",
        f"Sizes range from {min(counts):,} to {max(counts):,} questions.",
    ]
    if published is not None:
        summary.append(f"The table itself reports {published * 100:.1f}%.")
    width = state["width"]
    rows = Rows.fit([f"{name} ({n:,})" for name, n, _ in parts], width)
    bar_h = 16 if len(parts) <= 12 else 11  # a whole run has 57 subjects
    x = Linear((0, 1), (rows.x0, rows.x1))
    top = y0 = 10
    marks = []
    for name, n, acc in parts:
        # Above its bar, a long subject's name ("high school government and politics (193)") takes
        # two lines on a phone.
        text = f"{name} ({n:,})"
        lines = [text] if rows.beside else wrap(text, width - GAP - rows.x0)
        marks += [rows.name(y0 + 3 + k * rows.name_height, bar_h, line) for k, line in enumerate(lines)]
        bar = y0 + len(lines) * rows.name_height
        marks.append(rect(x(0), x(acc), bar + 3, bar + 3 + bar_h, "fig-bar-model-a",
                          f"{name}: {acc * 100:.1f}% over {n:,} questions"))
        y0 = bar + bar_h + 6
    bottom = y0
    names = Placer(width)  # the two averages' names under their lines, one a line lower if they would meet
    for value, cls, text in ((micro, "fig-ref fig-delta", "micro"), (macro, "fig-ref", "macro")):
        marks.append(rect(x(value) - 1, x(value) + 1, top, bottom, cls, f"{text}-average {value * 100:.1f}%"))
        shown = f"{text} {value * 100:.1f}%"
        marks.append(names.near(shown, "fig-ref-label fig-key", x(value), [bottom + 16, bottom + 32]))
    axis_at = names.bottom + 8
    marks += percent_axis_x(x, axis_at, step=25)
    height = round(axis_at + 24 + GAP)
    return {
        "summary": summary,
        "figure": figure(width, height, f"Accuracy per part with the micro- and macro-averages, {where}", marks),
        "numbers": {"micro": micro, "macro": macro, "parts": len(parts)},
    }


WIDGET = Widget(
    name="micro-macro",
    title="Micro against macro",
    blurb="One set of results, two averages: per question and per subject or group.",
    height=700, params=params, view=view,
    needs={"table_1": table_rows, "group_sizes": sizes}, accepts={"live_scores": live_scores},
)
