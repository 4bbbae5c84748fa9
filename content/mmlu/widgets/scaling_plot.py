"""Accuracy against model size: GPT-3 at chance until 175B, UnifiedQA above it (Table 1, Appendix A)."""
from __future__ import annotations

from benchmarks.live_runs import PARAMETERS, live_scores, model_name
from benchmarks.mmlu.figures import paper_figures, reference
from widgetkit import Param, Widget
from widgetkit.layout import GAP, text_width
from widgetkit.scene import Y_AXIS_WIDTH, Linear, Log10, caption, figure, hline, label, legend, mark, percent_axis_y, vline
from widgetkit.words import pct

_SERIES = (
    ("fewshot", "GPT-3 few-shot", "GPT-3", "few-shot"),
    ("zeroshot", "GPT-3 zero-shot", "GPT-3", "zero-shot"),
    ("unifiedqa", "UnifiedQA (transfer)", "UnifiedQA", "transfer"),
)
LIVE = "live"


def _series(context: dict) -> list[tuple[str, str, list[dict]]]:
    """(key, name, points) for each series: the paper's, then this site's model where runs are published.
    A point is {"parameters", "accuracy" (percent), optional "approximate", optional "setting"}."""
    data = paper_figures()["scaling"]["series"]
    series = [(key, name, next(s for s in data if s["model"] == model and s["setting"] == setting)["points"])
              for key, name, model, setting in _SERIES]
    live = context.get("live_scores")
    if live:
        series.append((LIVE, f"{model_name(live['model']).removesuffix('-Instruct')} (our runs)",
                       [{"parameters": PARAMETERS, "accuracy": 100 * run["correct"] / run["questions"], "setting": run["key"]}
                        for run in live["runs"]]))
    return series


def params(context: dict) -> tuple[Param, ...]:
    series = _series(context)
    return (
        Param("show", "Series shown", "set", tuple(key for key, *_ in series),
              choices=tuple((key, name) for key, name, _ in series)),
    )


def _size(parameters: float) -> str:
    if parameters >= 1e9:
        return f"{parameters / 1e9:.3g}B"
    return f"{parameters / 1e6:.3g}M"


def _point_label(point: dict, cx: float, cy: float, nth: int, width: float) -> dict:
    """A point's label, kept inside the figure: above it (below it near the top), or below it for a
    second point at the same size (one model, two settings)."""
    words = f"{point['setting']}: {point['accuracy']:.1f}%" if "setting" in point else \
        f"{_size(point['parameters'])}: {point['accuracy']:.1f}%"
    half = text_width(words, "fig-point-label") / 2
    y = (cy - 12 if cy > 40 else cy + 24) if nth == 0 else cy + 22
    return label(min(max(cx, half + GAP), width - half - GAP), y, words, "fig-point-label")


def _point(key: str, name: str, pts: list[dict], nth: int, cx: float, cy: float, width: float) -> dict:
    """The ``nth`` point of series ``key`` (named ``name``) at (cx, cy): its dot, its label, and where
    two settings share its size, the setting's name beside it."""
    p = pts[nth]
    setting = f", {p['setting']}" if "setting" in p else ""
    text = f"{name}, {_size(p['parameters'])} parameters{setting}: {p['accuracy']:.1f}%"
    point = {"class": f"fig-point series-{key}", "tabindex": "0", "role": "img", "aria-label": text}
    same_size = sum(1 for q in pts[:nth] if q["parameters"] == p["parameters"])
    pair = [q for q in pts if q["parameters"] == p["parameters"]]
    higher = p is sorted(pair, key=lambda q: q["accuracy"])[-1]  # of equals, the second
    named = ([label(cx + 10, cy - 6, p["setting"], "fig-tick", "start") if higher else
              label(cx - 10, cy + 13, p["setting"], "fig-tick", "end")] if len(pair) > 1 and "setting" in p else [])
    return mark("g", point, children=[
        mark("circle", {"cx": cx, "cy": cy, "r": 6}),
        _point_label(p, cx, cy, same_size, width),
        *named,
    ])


def view(state: dict, context: dict) -> dict:
    chance, expert = reference("chance"), reference("expert")
    width = state["width"]
    left, right = Y_AXIS_WIDTH, width - 2 * GAP
    x = Log10((1e7, 1e12), (left, right))
    y = Linear((0, 1), (270, 20))
    marks = percent_axis_y(y, left, right)
    marks.append(hline(left, right, 270, "fig-axis"))
    # A label at every power of ten where they have room, at every other one where not.
    every = 1 if (x(1e8) - x(1e7)) >= text_width("100M") + GAP else 2
    for power in range(7, 13):
        marks.append(vline(x(10 ** power), 270, 275, "fig-axis"))
        if (power - 7) % every == 0:
            marks.append(label(x(10 ** power), 290, _size(10 ** power) if power < 12 else "1T", "fig-tick"))
    words, bottom = caption((left + right) / 2, 298, right - left, "parameters (log scale: each step is ten times more)")
    marks += words + [
        hline(left, right, y(chance), "fig-ref fig-chance"),
        label(right - 2, y(chance) + 16, f"chance {pct(chance, 0)}", "fig-ref-label", "end"),  # under its line: no point is there
        hline(left, right, y(expert), "fig-ref fig-expert"),
        label(right - 2, y(expert) - 6, f"expert {pct(expert)}", "fig-ref-label", "end"),
    ]
    summary = []
    series = _series(context)
    for key, name, pts in series:
        described = ", ".join(
            f"{_size(p['parameters'])}{' ' + p['setting'] if 'setting' in p else ''} {p['accuracy']:.1f}%"
            f"{' (about)' if p.get('approximate') else ''}" for p in pts)
        if key not in state["show"]:
            summary.append(f"{name}: hidden.")
            continue
        summary.append(f"{name}: {described}.")
        # Every dot at its true size: two settings of one model (0 and 5 shots) share it, so they are
        # told apart by name, written beside each, not moved: the lower one's left of it and a little
        # down, the higher one's right of it and a little up, clear of a reference line through them.
        coords = [(x(p["parameters"]), y(p["accuracy"] / 100)) for p in pts]
        if len({p["parameters"] for p in pts}) > 1:
            marks.append(mark("polyline", {"points": " ".join(f"{a:.1f},{b:.1f}" for a, b in coords),
                                           "class": f"fig-line series-{key}"}))
        marks += [_point(key, name, pts, nth, cx, cy, width) for nth, (cx, cy) in enumerate(coords)]
    keys, bottom = legend([("dot", f"fig-legend series-{key}", name) for key, name, _ in series if key in state["show"]],
                          left, bottom + 8, right - left)
    marks += keys
    ours = (f"; {series[-1][1]}: this site's model over every test question, at its "
            f"{_size(series[-1][2][0]['parameters'])} parameters" if series[-1][0] == LIVE else "")
    summary.append(f"Chance is {pct(chance, 0)} and the estimated expert level {pct(expert)} (Section 3); "
                   f"accuracies from Table 1 and Appendix A{ours}.")
    return {
        "summary": summary,
        "figure": figure(width, round(bottom + GAP), "Accuracy against number of parameters, log scale", marks, role="group"),
        "numbers": {"shown": state["show"]},
    }




WIDGET = Widget(
    name="scaling-plot",
    title="Accuracy against model size",
    blurb="Few-shot GPT-3 sits at chance until 175 billion parameters; UnifiedQA starts above it (Table 1, Appendix A).",
    height=640, params=params, view=view, style=True, accepts={"live_scores": live_scores},
)
