"""The rotation check as a widget: does the live model pick an answer, or a position?

Each published rotation run (benchmarks/mmlu/server/rotation_runs.py) asked every question four
times with its options rotated (the key moving with its text). The widget shows, for the whole run
or one subject: the accuracy with the options as published, averaged over the four orders, and
counted only when right in all four; the share answered with the same option in all four; and
where the answers landed (the share of picks at the model's favourite position, in each order).
A random guesser's value is marked beside each bar.

Documents share it through :func:`rotation_widget` (one concept, one component). The context,
``rotation_runs``: {"runs": [{"key", "shots", "split", "rotations", "sample", "whole", "model",
"all": tally, "subjects": {subject: tally}}]}, a tally being {"n", "consistent", "all_right",
"first_right", "right", "positions": [[picks at A, B, C, D] for each rotation]}.
Standard library only: the view runs in the reader's browser too.
"""
from __future__ import annotations

from explainers import checks
from widgetkit import Param, Widget
from widgetkit.layout import GAP
from widgetkit.scene import Linear, Rows, figure, key, label, legend, percent_axis_x, rect, vline
from widgetkit.words import count, pct

LETTERS = "ABCD"
ALL = "all"


def _tally(name: str, value: object, rotations: int) -> dict:
    found = checks.mapping(name, value)
    n = checks.whole(f"{name}.n", found.get("n"))
    for field in ("consistent", "all_right", "first_right"):
        if checks.whole(f"{name}.{field}", found.get(field), minimum=0) > n:
            raise ValueError(f"{name}.{field} is more than its {n} questions")
    if checks.whole(f"{name}.right", found.get("right"), minimum=0) > n * rotations:
        raise ValueError(f"{name}.right is more than its {n * rotations} answers")
    positions = checks.sequence(f"{name}.positions", found.get("positions"))
    if len(positions) != rotations:
        raise ValueError(f"{name}.positions needs one list per rotation ({rotations})")
    for i, picks in enumerate(positions):
        picks = checks.sequence(f"{name}.positions[{i}]", picks, minimum=len(LETTERS))
        if len(picks) != len(LETTERS) or sum(checks.whole(f"{name}.positions[{i}]", p, minimum=0)
                                             for p in picks) != n:
            raise ValueError(f"{name}.positions[{i}] must count the {n} answers at A, B, C and D")
    return found


def rotation_runs(name: str, value: object) -> dict:
    """Checks ``rotation_runs`` (see the module's docstring)."""
    found = checks.mapping(name, value)
    for i, run in enumerate(checks.sequence(f"{name}.runs", found.get("runs"))):
        where = f"{name}.runs[{i}]"
        checks.mapping(where, run)
        checks.text(f"{where}.key", run.get("key"))
        checks.text(f"{where}.sample", run.get("sample"))
        checks.text(f"{where}.model", run.get("model"))
        rotations = checks.whole(f"{where}.rotations", run.get("rotations"), minimum=2)
        _tally(f"{where}.all", run.get("all"), rotations)
        for subject, tally in checks.mapping(f"{where}.subjects", run.get("subjects")).items():
            _tally(f"{where}.subjects[{subject!r}]", tally, rotations)
    return found


def params(context: dict) -> tuple[Param, ...]:
    runs = (context.get("rotation_runs") or {}).get("runs", [])
    if not runs:
        return ()
    subjects = sorted({subject for run in runs for subject in run["subjects"]})
    subject = Param("subject", "Questions", "choice", ALL,
                    choices=((ALL, "every subject"), *((s, s.replace("_", " ")) for s in subjects)))
    if len(runs) == 1:  # nothing to choose between: the headline names the one check
        return (subject,)
    return (Param("run", "Which check", "choice", runs[0]["key"],
                  choices=tuple((run["key"], f"{run['key']}, {run['sample']}") for run in runs)), subject)


def _chance(rotations: int) -> dict[str, float]:
    """A guesser who picks uniformly at random in every order: right 1/4 of the time in any one
    order, right in all of them (1/4)^K, the same option in all of them (1/4)^(K-1)."""
    return {"first": 1 / 4, "mean": 1 / 4, "all": (1 / 4) ** rotations, "same": (1 / 4) ** (rotations - 1)}


def view(state: dict, context: dict) -> dict:
    runs = (context.get("rotation_runs") or {}).get("runs", [])
    width = state["width"]
    if not runs:
        return {"summary": ["No rotation check is published on this site yet."],
                "figure": figure(width, 40, "No rotation check published",
                                 [key([label(width / 2, 24, "No check published")])]),
                "numbers": {}}
    run = next((r for r in runs if r["key"] == state.get("run")), runs[0])
    subject = state.get("subject", ALL)
    tally = run["subjects"].get(subject) if subject != ALL else None
    tally = tally or run["all"]
    where = "every subject" if tally is run["all"] else subject.replace("_", " ")
    k, n = run["rotations"], tally["n"]
    shares = {"first": tally["first_right"] / n, "mean": tally["right"] / (n * k), "all": tally["all_right"] / n,
              "same": tally["consistent"] / n}
    chance = _chance(k)
    names = {"first": "Right, options as published", "mean": f"Right, averaged over the {k} orders",
             "all": f"Right in all {k} orders", "same": f"Same option in all {k} orders"}
    picks = [sum(p[i] for p in tally["positions"]) for i in range(len(LETTERS))]
    favourite = LETTERS[picks.index(max(picks))]
    at_favourite = [p[LETTERS.index(favourite)] / n for p in tally["positions"]]

    # The fifth bar: where the answers landed, over every order (each order's share is in the summary).
    names["position"] = f"Answers at position {favourite}, its favourite"
    shares["position"] = sum(at_favourite) / k
    chance["position"] = 1 / 4
    marks, bottom = _bars(width, names, shares, chance)
    model = run["model"]
    summary = _summary(run, where, n, shares, chance, favourite, at_favourite)
    return {"summary": summary,
            "figure": figure(width, round(bottom + GAP), f"Rotation check of {model}, {run['key']}, {where}",
                             marks),
            "numbers": {"n": n, **shares, "favourite": favourite, "at_favourite": at_favourite}}


def _bars(width: float, names: dict, shares: dict, chance: dict) -> tuple[list, float]:
    """One bar per share with the guesser's rate as a line across it, the axis and the legend; and
    the drawing's bottom."""
    rows_at = Rows.fit(list(names.values()), width)
    pitch = rows_at.name_height + 26
    x = Linear((0, 1), (rows_at.x0, rows_at.x1))
    marks, named = [], []
    top = 12
    for i, (part, share) in enumerate(shares.items()):
        row_top = top + i * pitch + (10 if part == "position" else 0)  # set apart: a different question
        bar_top = row_top + rows_at.name_height + 2
        named.append(rows_at.name(row_top + 2, 18, names[part]))
        marks.append(rect(x(0), x(share), bar_top, bar_top + 18, "fig-bar-model-a", f"{names[part]}: {pct(share)}"))
        marks.append(vline(x(chance[part]), bar_top - 3, bar_top + 21, "fig-ref fig-chance"))
        marks.append(label(x(share) - 6, bar_top + 14, pct(share), "fig-tick fig-halo", "end") if share > 0.8 else
                     label(x(max(share, chance[part])) + 6, bar_top + 14, pct(share), "fig-tick", "start"))
    axis_at = top + len(shares) * pitch + 12
    marks += percent_axis_x(x, axis_at, step=25)
    marks.append(key(named))
    keys, bottom = legend([("line", "fig-ref fig-chance", "a random guesser")],
                          rows_at.x0 if rows_at.beside else GAP, axis_at + 26, width - 2 * GAP)
    return marks + keys, bottom


def _summary(run: dict, where: str, n: int, shares: dict, chance: dict, favourite: str,
             at_favourite: list[float]) -> list[str]:
    k = run["rotations"]
    return [
        f"{run['model']}, {run['key']} ({run['sample']}), {where}, {count(n)} questions each asked in {k} orders: the "
        f"same option in all {k} "
        f"orders {pct(shares['same'])}, right in all {k} {pct(shares['all'])} (right as published "
        f"{pct(shares['first'])}, over the {k} orders {pct(shares['mean'])}).",
        f"A random guesser would be right {pct(chance['first'])} of the time in any one order, in all {k} "
        f"{pct(chance['all'], 2)} of the time, and would choose the same option in all {k} "
        f"{pct(chance['same'], 2)} of the time.",
        f"Position {favourite} took {pct(sum(at_favourite) / k)} of its answers over the {k} orders "
        f"({', '.join(pct(s) for s in at_favourite)} in orders 1 to {k}), whatever option stood there: "
        + ("the model answers a position, not an option." if min(at_favourite) > 0.5 else
           "its answers move with the options more than with the positions."),
    ]


def rotation_widget(name: str, title: str, blurb: str, height: int = 760) -> Widget:
    """A document's rotation-check widget (its name, title and blurb are the document's)."""
    return Widget(name=name, title=title, blurb=blurb, height=height, params=params, view=view,
                  accepts={"rotation_runs": rotation_runs})
