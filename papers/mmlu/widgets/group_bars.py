"""Accuracy by group, with error bands: GPT-3 X-Large and UnifiedQA on Table 1's four groups, micro and macro."""
from __future__ import annotations

from explainers import scoring, stats
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.intervals import interval_params
from widgetkit.scene import Linear, figure, hline, label, mark, percent_axis_y, rect, vline, whisker
from widgetkit.words import count, level_text, pct

from ..figures import paper_figures, reference
from ..groups import GROUPS


def params(context: dict) -> tuple[Param, ...]:
    return interval_params()


def group_sizes(name: str, value: object) -> dict[str, int]:
    """Questions per group, naming exactly the four groups."""
    found = sizes(name, value)
    keys = [group.key for group in GROUPS]
    if set(found) != set(keys):
        raise ValueError(f"{name} must name exactly {', '.join(keys)}")
    return found


def view(state: dict, context: dict) -> dict:
    level, method = float(state["level"]), state["band"]
    table = paper_figures()["table_1"]["rows"]
    counts = context["group_sizes"]
    models = [row for row in table if row["model"] in ("GPT-3 X-Large", "UnifiedQA")]
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
                f"macro average (plain mean of the four groups): {pct(macro)}; the paper's Average column: {row['average']:.1f}%."
            )
        else:
            summary.append(f"{row['model']}: the paper's average is {row['average']:.1f}%; "
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
    summary.append(f"Bands: {level_text(level)} intervals from each group's number of test questions; "
                   "group scores from Table 1; chance 25%.")
    return {
        "summary": summary,
        "figure": figure(560, 290, "Accuracy by group for GPT-3 X-Large and UnifiedQA, with micro and macro averages", marks),
        "numbers": numbers,
    }



WIDGET = Widget(
    name="group-bars",
    title="Accuracy by group, with error bands",
    blurb="GPT-3 X-Large and UnifiedQA on the four groups of Table 1, and two ways to average them.",
    height=640, params=params, view=view, needs={"group_sizes": group_sizes},
)
