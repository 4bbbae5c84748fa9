"""Accuracy by group, with error bands: GPT-3 X-Large and UnifiedQA on Table 1's four groups, micro and
macro, or this site's live model in its published 0- and 5-shot runs."""
from __future__ import annotations

from benchmarks.live_runs import live_scores, model_name
from benchmarks.mmlu.figures import paper_figures, reference
from benchmarks.mmlu.groups import GROUPS
from explainers import scoring, stats
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.intervals import interval_params
from widgetkit.layout import GAP, text_width
from widgetkit.scene import Y_AXIS_WIDTH, Linear, Placer, figure, hline, label, legend, percent_axis_y, rect, vline, whisker
from widgetkit.words import count, level_text, pct

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
    """The published runs as Table 1 rows: each group's accuracy and the whole-test score, in percent.
    The chart sets two models side by side (two bar colours), so it takes the first two runs (0- and 5-shot)."""
    name = model_name(live["model"]).removesuffix("-Instruct")
    return [{"model": f"{name}, {run['key']}", "measured": True,
             "average": 100 * run["correct"] / run["questions"],
             **{group.key: 100 * run["groups"][group.key][0] / run["groups"][group.key][1]
                if group.key in run["groups"] else None for group in GROUPS}}
            for run in live["runs"][:2]]


def group_sizes(name: str, value: object) -> dict[str, int]:
    """Questions per group, naming exactly the four groups."""
    found = sizes(name, value)
    keys = [group.key for group in GROUPS]
    if set(found) != set(keys):
        raise ValueError(f"{name} must name exactly {', '.join(keys)}")
    return found


def _model_bars(row: dict, m_index: int, counts: dict[str, int], level: float, method: str,
                x_at, bar: float, y: Linear) -> tuple[list[dict], str, float | None, float | None]:
    """One model's bars: a bar and band for each group, then its micro and macro averages (only where
    every group is known), with its sentence for the summary. ``x_at(position)``: the left edge of its
    bar in slot ``position``. Returns the marks, the sentence, and the micro and macro averages."""
    keys = [group.key for group in GROUPS]
    titles = {group.key: group.title for group in GROUPS}
    cls = "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b"
    marks, phrases = [], []
    for g_index, k in enumerate(keys):
        xs = x_at(g_index)
        if row[k] is None:
            marks.append(label(xs + bar / 2, y(0) - 6, "n/a", "fig-tick"))
            continue
        acc, n = row[k] / 100, counts[k]
        low, high = stats.confidence_interval(acc, n, level, method)
        tip = f"{row['model']}, {titles[k]}: {acc * 100:.1f}% of {count(n)} questions"
        marks.append(rect(xs, xs + bar, y(0), y(acc), cls, tip))
        marks.append(whisker(xs + bar / 2, y(low), y(high), cap=min(5, bar / 2)))
        phrases.append(f"{titles[k]} {acc * 100:.1f}% ({pct(low)}–{pct(high)}, {count(n)} questions)")
    if any(row[k] is None for k in keys):
        return marks, (f"{row['model']}: {row['average']:.1f}% over the questions it was run on; "
                       "some groups are not in its run." if row.get("measured") else
                       f"{row['model']}: the paper's average is {row['average']:.1f}%; "
                       "its group scores are not in our sources."), None, None
    accs = [row[k] / 100 for k in keys]
    micro = scoring.weighted_accuracy([counts[k] for k in keys], accs)
    macro = scoring.plain_mean(accs)
    low, high = stats.confidence_interval(micro, sum(counts[k] for k in keys), level, method)
    for offset, value, name in ((0, micro, "micro"), (1, macro, "macro")):
        xs = x_at(len(keys) + offset)
        marks.append(rect(xs, xs + bar, y(0), y(value), cls, f"{row['model']}, {name} average: {pct(value)}"))
    xs = x_at(len(keys))
    marks.append(whisker(xs + bar / 2, y(low), y(high), cap=min(5, bar / 2)))
    sentence = (
        f"{row['model']}: " + "; ".join(phrases) + ". "
        f"Micro average (every question counts once, weighted by our test files' group sizes): {pct(micro)}; "
        f"macro average (plain mean of the four groups): {pct(macro)}; "
        + (f"its score over the whole test: {row['average']:.1f}%." if row.get("measured")
           else f"the paper's Average column: {row['average']:.1f}%.")
    )
    return marks, sentence, micro, macro


def _slot_names(width: int, left: float, slot: float) -> tuple[list[dict], float]:
    """Each slot's name under it, all on one line: the short names where each fits its slot (clear of
    the divider before the averages), else the shortest (a phone); a line lower only if even those
    meet. Returns the marks (the divider included) and their bottom."""
    texts = [group.short for group in GROUPS] + ["micro avg", "macro avg"]
    if max(text_width(text, "fig-group-label") for text in texts) + 2 * GAP > slot:
        texts = [group.shortest for group in GROUPS] + ["micro", "macro"]
    names = Placer(width)
    marks = [names.near(text, "fig-group-label", left + slot * (position + 0.5),
                        [250 + 16 * line for line in range(len(texts))])
             for position, text in enumerate(texts)]
    marks.append(vline(left + slot * len(GROUPS), 20, names.bottom, "fig-divider"))
    return marks, names.bottom


def view(state: dict, context: dict) -> dict:
    level, method = float(state["level"]), state["band"]
    counts = context["group_sizes"]
    if state.get("models") == "live":
        models = _live_rows(context["live_scores"])
    else:
        models = [row for row in paper_figures()["table_1"]["rows"] if row["model"] in PAPER_MODELS]
    width = state["width"]
    y = Linear((0, 1), (230, 20))
    left, right = Y_AXIS_WIDTH, width - GAP
    slot = (right - left) / (len(GROUPS) + 2)
    bar = min(28, (slot - 8) / 2)

    def bar_x(position: int, model: int) -> float:
        """The left edge of a model's bar in a slot: the first model left of the slot's middle."""
        return left + slot * (position + 0.5) + (-bar - 1 if model == 0 else 1)
    marks = percent_axis_y(y, left, right)
    marks.append(hline(left, right, y(reference("chance")), "fig-ref fig-chance"))
    summary, numbers = [], {}
    for m_index, row in enumerate(models):
        bars, sentence, micro, macro = _model_bars(row, m_index, counts, level, method,
                                                   lambda position, m=m_index: bar_x(position, m), bar, y)
        marks += bars
        summary.append(sentence)
        numbers[row["model"]] = {"micro": micro, "macro": macro}
    name_marks, names_bottom = _slot_names(width, left, slot)
    marks += name_marks
    keys_marks, bottom = legend([("box", "fig-bar-model-a" if m_index == 0 else "fig-bar-model-b", row["model"])
                                 for m_index, row in enumerate(models)], left, names_bottom + 6, right - left)
    marks += keys_marks
    scores_from = ("our own runs of the live model over every test question" if state.get("models") == "live"
                   else "Table 1")
    # The headline: each model's two averages in one short sentence; the groups' scores follow it.
    averaged = [f"{row['model']} {pct(numbers[row['model']]['micro'])} micro, "
                f"{pct(numbers[row['model']]['macro'])} macro average" for row in models
                if numbers[row["model"]]["micro"] is not None]
    if averaged:
        summary.insert(0, "; ".join(averaged) + ".")
    summary.append(f"Bands: {level_text(level)} intervals from each group's number of test questions; "
                   f"group scores from {scores_from}; chance 25%.")
    return {
        "summary": summary,
        "figure": figure(width, round(bottom + GAP), f"Accuracy by group for {' and '.join(row['model'] for row in models)}, "
                                                    "with micro and macro averages", marks),
        "numbers": numbers,
    }


WIDGET = Widget(
    name="group-bars",
    title="Accuracy by group, with error bands",
    blurb="GPT-3 X-Large and UnifiedQA on the four groups of Table 1, and two ways to average them.",
    height=640, params=params, view=view, needs={"group_sizes": group_sizes}, accepts={"live_scores": live_scores},
)
