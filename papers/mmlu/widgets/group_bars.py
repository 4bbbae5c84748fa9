"""Accuracy by group, with error bands: GPT-3 X-Large and UnifiedQA on Table 1's four groups, micro and
macro, or this site's live model in its published 0- and 5-shot runs."""
from __future__ import annotations

from explainers import scoring, stats
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.intervals import interval_params
from widgetkit.scene import Linear, figure, hline, label, mark, percent_axis_y, rect, vline, whisker
from widgetkit.words import count, level_text, pct

from ..figures import paper_figures, reference
from ..groups import GROUPS
from ..live_runs import live_scores, model_name

PAPER_MODELS = ("GPT-3 X-Large", "UnifiedQA")


def params(context: dict) -> tuple[Param, ...]:
    live = context.get("live_scores")
    if not live:
        return interval_params()
    runs = " and ".join(run["key"] for run in live["runs"])
    compare = Param("models", "Models compared", "choice", "paper", choices=(
        ("paper", f"{' and '.join(PAPER_MODELS)}"),
        ("live", f"our model, {runs}"),
    ))
    return (compare, *interval_params())


def _live_rows(live: dict) -> list[dict]:
    """The published runs as Table 1 rows: each group's accuracy and the whole-test score, in percent."""
    name = model_name(live["model"]).removesuffix("-Instruct")
    return [{"model": f"{name}, {run['key']}", "measured": True,
             "average": 100 * run["correct"] / run["questions"],
             **{group.key: 100 * run["groups"][group.key][0] / run["groups"][group.key][1]
                if group.key in run["groups"] else None for group in GROUPS}}
            for run in live["runs"]][:2]


def group_sizes(name: str, value: object) -> dict[str, int]:
    """Questions per group, naming exactly the four groups."""
    found = sizes(name, value)
    keys = [group.key for group in GROUPS]
    if set(found) != set(keys):
        raise ValueError(f"{name} must name exactly {', '.join(keys)}")
    return found


def view(state: dict, context: dict) -> dict:
    level, method = float(state["level"]), state["band"]
    counts = context["group_sizes"]
    if state.get("models") == "live":
        models = _live_rows(context["live_scores"])
    else:
        models = [row for row in paper_figures()["table_1"]["rows"] if row["model"] in PAPER_MODELS]
    keys = [group.key for group in GROUPS]
    titles = {group.key: group.title for group in GROUPS}
    y = Linear((0, 1), (230, 20))
    left, right = 56, 550
    slots = len(keys) + 2
    slot = (right - left) / slots
    stripes = mark("pattern", {"id": "w-stripes", "width": 6, "height": 6, "patternUnits": "userSpaceOnUse",
                               "patternTransform": "rotate(45)"},
                   children=[mark("rect", {"width": 6, "height": 6, "class": "stripe-bg"}), vline(0, 0, 6, "stripe")])
    marks = [mark("defs", children=[stripes])] + percent_axis_y(y, left, right)
    marks.append(hline(left, right, y(reference("chance")), "fig-ref fig-chance"))
    summary, numbers = [], {}
    for m_index, row in enumerate(models):
        cls = "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b"
        known = [k for k in keys if row[k] is not None]
        phrases = []
        for g_index, k in enumerate(keys):
            xs = left + slot * g_index + slot / 2 + (-30 if m_index == 0 else 2)
            if row[k] is None:
                marks.append(label(xs + 14, y(0) - 6, "n/a", "fig-tick"))
                continue
            acc, n = row[k] / 100, counts[k]
            low, high = stats.confidence_interval(acc, n, level, method)
            tip = f"{row['model']}, {titles[k]}: {acc * 100:.1f}% of {count(n)} questions"
            marks.append(rect(xs, xs + 28, y(0), y(acc), cls, tip))
            marks.append(whisker(xs + 14, y(low), y(high)))
            phrases.append(f"{titles[k]} {acc * 100:.1f}% ({pct(low)}–{pct(high)}, {count(n)} questions)")
        micro = macro = None
        if len(known) == len(keys):
            accs = [row[k] / 100 for k in keys]
            micro = scoring.weighted_accuracy([counts[k] for k in keys], accs)
            macro = scoring.plain_mean(accs)
            total = sum(counts[k] for k in keys)
            low, high = stats.confidence_interval(micro, total, level, method)
            for offset, value, name in ((0, micro, "micro"), (1, macro, "macro")):
                xs = left + slot * (len(keys) + offset) + slot / 2 + (-30 if m_index == 0 else 2)
                marks.append(rect(xs, xs + 28, y(0), y(value), cls, f"{row['model']}, {name} average: {pct(value)}"))
            xs = left + slot * len(keys) + slot / 2 + (-30 if m_index == 0 else 2)
            marks.append(whisker(xs + 14, y(low), y(high)))
            summary.append(
                f"{row['model']}: " + "; ".join(phrases) + ". "
                f"Micro average (every question counts once, weighted by our test files' group sizes): {pct(micro)}; "
                f"macro average (plain mean of the four groups): {pct(macro)}; "
                + (f"its score over the whole test: {row['average']:.1f}%." if row.get("measured")
                   else f"the paper's Average column: {row['average']:.1f}%.")
            )
        else:
            summary.append(f"{row['model']}: {row['average']:.1f}% over the questions it was run on; "
                           "some groups are not in its run." if row.get("measured") else
                           f"{row['model']}: the paper's average is {row['average']:.1f}%; "
                           "its group scores are not in our sources.")
        numbers[row["model"]] = {"micro": micro, "macro": macro}
    for g_index, group in enumerate(GROUPS):
        marks.append(label(left + slot * (g_index + 0.5), 250, group.short, "fig-group-label"))
    marks.append(label(left + slot * (len(keys) + 0.5), 250, "micro avg", "fig-group-label"))
    marks.append(label(left + slot * (len(keys) + 1.5), 250, "macro avg", "fig-group-label"))
    marks.append(vline(left + slot * len(keys), 20, 255, "fig-divider"))
    for m_index, row in enumerate(models):
        lx = 70 + 170 * m_index
        marks.append(rect(lx, lx + 14, 262, 276, "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b"))
        marks.append(label(lx + 20, 274, row["model"], "fig-tick", "start"))
    scores_from = ("our own runs of the live model over every test question" if state.get("models") == "live"
                   else "Table 1")
    summary.append(f"Bands: {level_text(level)} intervals from each group's number of test questions; "
                   f"group scores from {scores_from}; chance 25%.")
    return {
        "summary": summary,
        "figure": figure(560, 290, f"Accuracy by group for {' and '.join(row['model'] for row in models)}, "
                                   "with micro and macro averages", marks),
        "numbers": numbers,
    }



WIDGET = Widget(
    name="group-bars",
    title="Accuracy by group, with error bands",
    blurb="GPT-3 X-Large and UnifiedQA on the four groups of Table 1, and two ways to average them.",
    height=640, params=params, view=view, needs={"group_sizes": group_sizes}, accepts={"live_scores": live_scores},
)
