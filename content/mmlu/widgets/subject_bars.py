"""Lopsided knowledge: GPT-3's scores on the subjects Section 4.2 names (or this site's live model's, from
its published runs), each with a band from its test size."""
from __future__ import annotations

from benchmarks.live_runs import live_scores, model_name, run_choices, run_of
from benchmarks.mmlu.figures import paper_figures, reference
from explainers import stats
from widgetkit import Param, Widget
from widgetkit.context import sizes
from widgetkit.intervals import interval_params
from widgetkit.layout import GAP
from widgetkit.scene import Linear, Placer, Rows, figure, hwhisker, key, percent_axis_x, rect, vline
from widgetkit.words import count, level_text, pct

PAPER = "gpt3"


def params(context: dict) -> tuple[Param, ...]:
    live = run_choices(context.get("live_scores"), "our model, {shots}-shot")
    if not live:
        return interval_params()
    model = Param("model", "Whose scores", "choice", PAPER,
                  choices=((PAPER, "GPT-3 X-Large, few-shot"), *live))
    return (model, *interval_params())


def _rows(state: dict, context: dict) -> tuple[list[dict], str]:
    """The five named subjects with the chosen model's accuracy (percent), and whose it is."""
    rows = paper_figures()["subjects"]["rows"]
    chosen = state.get("model", PAPER)
    if chosen == PAPER:
        return rows, "GPT-3 X-Large, few-shot; scores named in Section 4.2"
    live = context["live_scores"]
    run = run_of(live, chosen)
    measured = [{"subject": row["subject"], "name": row["name"],
                 "accuracy": 100 * run["subjects"][row["subject"]][0] / run["subjects"][row["subject"]][1]}
                for row in rows]
    paper = "; ".join(f"{row['name']} {'about ' if row.get('approximate') else ''}{row['accuracy']:.1f}%" for row in rows)
    return measured, (f"{model_name(live['model'])}, {run['key']}, our run over every test question of each subject "
                      f"(GPT-3 X-Large in Section 4.2: {paper})")


def subject_sizes(name: str, value: object) -> dict[str, int]:
    """Test questions per subject, including every subject the figure names."""
    found = sizes(name, value)
    for row in paper_figures()["subjects"]["rows"]:
        if row["subject"] not in found:
            raise ValueError(f"{name} needs {row['subject']!r}")
    return found


def view(state: dict, context: dict) -> dict:
    level, method = float(state["level"]), state["band"]
    rows, whose = _rows(state, context)
    counts = context["subject_sizes"]
    width = state["width"]
    rows_at = Rows.fit([row["name"] for row in rows], width)
    pitch = rows_at.name_height + 32
    x = Linear((0, 1), (rows_at.x0, rows_at.x1))
    chance, expert = reference("chance"), reference("expert")
    marks = []
    named = []  # the rows' names, drawn after the chance and expert lines so their halo keeps them clear
    summary = []
    numbers = {}
    for i, row in enumerate(rows):
        acc, n = row["accuracy"] / 100, counts[row["subject"]]
        low, high = stats.confidence_interval(acc, n, level, method)
        top = 12 + i * pitch
        bar_top = top + rows_at.name_height + 2
        about = "about " if row.get("approximate") else ""
        named.append(rows_at.name(top + 2, 22, row["name"]))
        tip = f"{row['name']}: {about}{acc * 100:.1f}% of {count(n)} questions"
        marks.append(rect(x(0), x(acc), bar_top, bar_top + 22, "fig-bar-model-a", tip))
        marks.append(hwhisker(x(low), x(high), bar_top + 11))
        summary.append(f"{row['name']}: {about}{acc * 100:.1f}% on {count(n)} test questions, "
                       f"{level_text(level)} band {pct(low)} to {pct(high)}.")
        numbers[row["subject"]] = {"low": low, "high": high, "n": n}
    bottom = 12 + len(rows) * pitch
    names = Placer(width)
    # The chance and expert lines run down the plot; where the names sit above their rows (a phone),
    # only across the bars, so no line runs through a name.
    spans = ([(6, bottom)] if rows_at.beside else
             [(12 + i * pitch + rows_at.name_height - 2, 12 + (i + 1) * pitch if i == len(rows) - 1 else
               12 + i * pitch + rows_at.name_height + 28) for i in range(len(rows))])
    marks += [vline(x(value), y0, y1, f"fig-ref {cls}") for value, cls in ((chance, "fig-chance"), (expert, "fig-expert"))
              for y0, y1 in spans]
    for value, text in ((chance, f"chance {pct(chance, 0)}"), (expert, f"expert {pct(expert)}")):
        named.append(names.near(text, "fig-ref-label", x(value), [bottom + 38, bottom + 54]))
    marks.append(key(named))
    marks += percent_axis_x(x, bottom, step=20)
    summary.append(f"{whose}; bands from each subject's test size in our data files.")
    return {
        "summary": summary,
        "figure": figure(width, round(names.bottom + GAP),
                         f"{whose.split(',')[0]}: accuracy on five named subjects with error bands", marks),
        "numbers": numbers,
    }


WIDGET = Widget(
    name="subject-bars",
    title="Lopsided knowledge: five named subjects",
    blurb="GPT-3's scores on the subjects Section 4.2 names, each with a band from its real test size.",
    height=560, params=params, view=view, needs={"subject_sizes": subject_sizes}, accepts={"live_scores": live_scores},
)
