"""Accuracy by group, with error bands: GPT-3 X-Large and UnifiedQA on Table 1's four groups, micro and macro."""
from __future__ import annotations

from explainers import scoring, stats
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.intervals import interval_params
from widgetkit.layout import GAP
from widgetkit.scene import Y_AXIS_WIDTH, Linear, Placer, figure, hline, label, legend, percent_axis_y, rect, vline, whisker
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
    width = state["width"]
    y = Linear((0, 1), (230, 20))
    left, right = Y_AXIS_WIDTH, width - GAP
    slots = len(keys) + 2
    slot = (right - left) / slots
    bar = min(28, (slot - 8) / 2)

    def bar_x(position: int, model: int) -> float:
        """The left edge of a model's bar in a slot: the first model left of the slot's middle."""
        return left + slot * (position + 0.5) + (-bar - 1 if model == 0 else 1)
    marks = percent_axis_y(y, left, right)
    marks.append(hline(left, right, y(reference("chance")), "fig-ref fig-chance"))
    summary, numbers = [], {}
    for m_index, row in enumerate(models):
        cls = "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b"
        known = [k for k in keys if row[k] is not None]
        phrases = []
        for g_index, k in enumerate(keys):
            xs = bar_x(g_index, m_index)
            if row[k] is None:
                marks.append(label(xs + bar / 2, y(0) - 6, "n/a", "fig-tick"))
                continue
            acc, n = row[k] / 100, counts[k]
            low, high = stats.confidence_interval(acc, n, level, method)
            tip = f"{row['model']}, {titles[k]}: {acc * 100:.1f}% of {count(n)} questions"
            marks.append(rect(xs, xs + bar, y(0), y(acc), cls, tip))
            marks.append(whisker(xs + bar / 2, y(low), y(high), cap=min(5, bar / 2)))
            phrases.append(f"{titles[k]} {acc * 100:.1f}% ({pct(low)}–{pct(high)}, {count(n)} questions)")
        micro = macro = None
        if len(known) == len(keys):
            accs = [row[k] / 100 for k in keys]
            micro = scoring.weighted_accuracy([counts[k] for k in keys], accs)
            macro = scoring.plain_mean(accs)
            total = sum(counts[k] for k in keys)
            low, high = stats.confidence_interval(micro, total, level, method)
            for offset, value, name in ((0, micro, "micro"), (1, macro, "macro")):
                xs = bar_x(len(keys) + offset, m_index)
                marks.append(rect(xs, xs + bar, y(0), y(value), cls, f"{row['model']}, {name} average: {pct(value)}"))
            xs = bar_x(len(keys), m_index)
            marks.append(whisker(xs + bar / 2, y(low), y(high), cap=min(5, bar / 2)))
            summary.append(
                f"{row['model']}: " + "; ".join(phrases) + ". "
                f"Micro average (every question counts once, weighted by our test files' group sizes): {pct(micro)}; "
                f"macro average (plain mean of the four groups): {pct(macro)}; the paper's Average column: {row['average']:.1f}%."
            )
        else:
            summary.append(f"{row['model']}: the paper's average is {row['average']:.1f}%; "
                           "its group scores are not in our sources.")
        numbers[row["model"]] = {"micro": micro, "macro": macro}
    names = Placer(width)  # each slot's name under it, or a line lower where its neighbour's is
    for position, text in enumerate([group.short for group in GROUPS] + ["micro avg", "macro avg"]):
        marks.append(names.near(text, "fig-group-label", left + slot * (position + 0.5),
                                [250 + 16 * line for line in range(slots)]))
    marks.append(vline(left + slot * len(keys), 20, names.bottom, "fig-divider"))
    keys_marks, bottom = legend([("box", "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b", row["model"])
                                 for m_index, row in enumerate(models)], left, names.bottom + 6, right - left)
    marks += keys_marks
    summary.append(f"Bands: {level_text(level)} intervals from each group's number of test questions; "
                   "group scores from Table 1; chance 25%.")
    return {
        "summary": summary,
        "figure": figure(width, round(bottom + GAP),
                         "Accuracy by group for GPT-3 X-Large and UnifiedQA, with micro and macro averages", marks),
        "numbers": numbers,
    }



WIDGET = Widget(
    name="group-bars",
    title="Accuracy by group, with error bands",
    blurb="GPT-3 X-Large and UnifiedQA on the four groups of Table 1, and two ways to average them.",
    height=640, params=params, view=view, needs={"group_sizes": group_sizes},
)
