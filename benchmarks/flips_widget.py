"""The questions that flipped between two runs, as one widget for every document that shows the
release gate (each document's gate links to it). Sans I/O: it runs in the reader's browser
(Pyodide) as well as on the server.

Two sources:

- the published runs (``published_answers``, a server object: every run's answers with the question
  text, from the benchmark's server side), any two of them, chosen by the ``production``
  and ``candidate`` settings. Drawn by the server, so the page reads without JavaScript and every
  view (filters, page) is an address;
- a reader's own files (``runs``, the gate's loader: {"production": [[name, text]], "candidate":
  [...]}), read in the page by the gate's reader and sent nowhere (the page's script draws the
  view the browser's Python makes).

It lists the flipped questions (``explainers.question_flips``), filtered by kind, subject, group and
letter, sorted by how far the key's probability moved, a page at a time, with each question's
"run it live" address on the live form the document names for its benchmark (``live_forms``), and
sets each run's letters beside the keys' (``explainers.letter_lean``). Its counts are the gate's:
the net flips over the questions are its paired delta.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from explainers import checks
from explainers.flips import KINDS, letter_lean, question_flips
from widgetkit import Param, Widget, state_query
from widgetkit.context import server_object
from widgetkit.scene import Linear, figure, label, rect

from . import registry
from .flips import Answer, answer_probability, key_probability, pair_answers, read_answers
from .gate_widget import groups_check, loaded_runs
from .runs import RunFormatError

PAGE_SIZE = 20
KIND_WORDS = {"right_to_wrong": "right to wrong", "wrong_to_right": "wrong to right",
              "other_wrong": "wrong in both, another letter"}
ANY = "any"
# The chart's bars, in the site's colours for a loss and a gain (and a neutral bar for a change of wrong letter).
BAR_CLASSES = {"right_to_wrong": "fig-bar-down", "wrong_to_right": "fig-bar-up", "other_wrong": "fig-bar-prob"}
SORTS = (("moved", "how far the key's probability moved"), ("order", "subject and question number"))


@dataclass(frozen=True)
class LiveForm:
    """A document's live form, where a flipped question is run again: its address and the number of
    worked examples it starts with (a question's address names its shots unless both are 0)."""

    url: str
    shots: int = 0


# -- context checks --------------------------------------------------------------------------

def published_list(name: str, value: object) -> list:
    """The published runs the settings offer: [[key, label], ...]."""
    found = checks.sequence(name, value, minimum=0)
    for i, item in enumerate(found):
        pair = checks.sequence(f"{name}[{i}]", item, minimum=2)
        checks.text(f"{name}[{i}][0]", pair[0])
        checks.text(f"{name}[{i}][1]", pair[1])
    return found


# -- settings --------------------------------------------------------------------------------

# The last pair of a reader's files, read: each filter or page asks the view again with the same files
# (in the page's worker; the server is never sent them), and reading 14,042 harness lines each time
# would make every click wait. One entry, replaced by the next pair of files.
_LAST_LOADED: dict = {}


def _fingerprint(runs: dict) -> tuple:
    return tuple((role, name, len(text), hash(text)) for role in ("production", "candidate")
                 for name, text in runs.get(role) or ())


def _loaded(context: dict) -> tuple[dict | None, str | None]:
    """The reader's files paired, or the error that says why they cannot be (None, None: none loaded)."""
    runs = context.get("runs")
    if not runs:
        return None, None
    key = _fingerprint(runs)
    if key not in _LAST_LOADED:
        try:
            if not runs.get("production") or not runs.get("candidate"):
                raise RunFormatError("load a production run and a candidate run")
            production = read_answers([tuple(f) for f in runs["production"]])
            candidate = read_answers([tuple(f) for f in runs["candidate"]])
            found = (pair_answers(production, candidate), None)
        except (RunFormatError, ValueError) as error:
            found = (None, str(error))
        _LAST_LOADED.clear()
        _LAST_LOADED[key] = found
    return _LAST_LOADED[key]


def _subjects(context: dict) -> list[str]:
    paired, _ = _loaded(context)
    if paired:
        return sorted({a.subject for a, _ in paired["pairs"]})
    return sorted(context.get("subject_groups") or {})


def params(context: dict) -> tuple[Param, ...]:
    published = [tuple(item) for item in context.get("published_runs") or []] or [("none", "no published run")]
    first, last = published[0][0], published[-1][0]
    letter_runs = [key for key, _ in published if "generative" not in key]
    if len(letter_runs) >= 2:
        first, last = letter_runs[0], letter_runs[-1]
    groups = sorted(set((context.get("subject_groups") or {}).values()))
    return (
        Param("kind", "Kind of flip", "choice", ANY,
              choices=((ANY, "every flip"), *((k, KIND_WORDS[k]) for k in KINDS))),
        Param("subject", "Subject", "choice", ANY,
              choices=((ANY, "every subject"), *((s, s.replace("_", " ")) for s in _subjects(context)))),
        Param("production", "Production run (before)", "choice", first, choices=tuple(published)),
        Param("candidate", "Candidate run (after)", "choice", last, choices=tuple(published)),
        Param("group", "Subject group", "choice", ANY, choices=((ANY, "every group"), *((g, g) for g in groups))),
        Param("letter", "A letter either run answered", "choice", ANY,
              choices=((ANY, "any letter"), *((x, x) for x in "ABCDEFGHIJ"))),
        Param("sort", "Order", "choice", "moved", choices=SORTS),
        Param("page", "Page", "int", 1, 1, 10_000, 1),
    )


# -- the view --------------------------------------------------------------------------------

def _pairs(state: dict, context: dict) -> tuple[dict, str]:
    paired, error = _loaded(context)
    if error:
        raise RunFormatError(error)
    if paired:
        return paired, "your loaded runs"
    published = context.get("published_answers")
    if published is None:
        raise RunFormatError("no published runs here: load a production run and a candidate run")
    if state["production"] == state["candidate"]:
        raise RunFormatError("choose two different runs: a run has no flips against itself")
    return published.paired(state["production"], state["candidate"]), (
        f"our published {state['production']} run (production) against our {state['candidate']} run (candidate)")


def live_address(answer: Answer, live_forms: Mapping[str, LiveForm]) -> str:
    """The live form's address with this question in it (its text, where the run has no row number).

    ``live_forms``: the document's forms by benchmark name; a question of a benchmark without one
    goes to the first, by its text. The question is named as its benchmark's task says: its group
    field, its split where the benchmark asks questions from more than one, its number."""
    name = answer.benchmark if answer.benchmark in live_forms else next(iter(live_forms))
    form, task = live_forms[name], registry.task(name)
    shots = {"shots": answer.shots or 0} if answer.shots or form.shots else {}
    if answer.index is not None:
        split = {"split": answer.split} if len(task.question_splits) > 1 else {}
        query = {task.group_field: answer.subject, **split, "number": answer.index + 1, **shots}
    else:  # a harness log names the question by the harness's own numbering: send its text
        choices = zip((letter.lower() for letter in task.letters), answer.choices or (), strict=False)
        query = {task.group_field: answer.subject, "source": "own", "question": answer.question or "",
                 **{f"choice_{letter}": text for letter, text in choices}, "answer": answer.key, **shots}
    return form.url + "?" + urlencode(query)


def _moved(before: Answer, after: Answer) -> float | None:
    """How far the key's probability moved, candidate minus production (None without probabilities)."""
    if key_probability(before) is None or key_probability(after) is None:
        return None
    return key_probability(after) - key_probability(before)


def _row(before: Answer, after: Answer, kind: str, live_forms: Mapping[str, LiveForm]) -> dict:
    moved = _moved(before, after)
    return {
        "kind": kind, "kind_words": KIND_WORDS[kind], "subject": before.subject.replace("_", " "),
        "number": before.index + 1 if before.index is not None else None,
        "question": before.question or after.question, "choices": list(before.choices or after.choices or ()),
        "key": before.key,
        "runs": [{"role": role, "answer": a.answer or "no letter", "probability": answer_probability(a),
                  "key_probability": key_probability(a), "correct": a.correct}
                 for role, a in (("production", before), ("candidate", after))],
        "moved": moved, "live": live_address(before if before.index is not None else after, live_forms),
    }


def _lean(answers: list[Answer]) -> dict:
    lean = letter_lean([a.answer for a in answers], [a.key for a in answers])
    return {**lean, "rows": [{"letter": x, "predicted": lean["predicted"][x], "key_share": lean["keys"][x]}
                             for x in lean["letters"]]}


def _scope(state: dict, counts: dict, groups: dict) -> tuple[str | None, dict]:
    """The subject or group the filters name (None: the whole pair) and its tallies of each kind."""
    if state["subject"] != ANY:
        name, subjects = state["subject"].replace("_", " "), [state["subject"]]
    elif state["group"] != ANY:
        name, subjects = f"the {state['group']} group", [s for s in counts["subjects"] if groups.get(s) == state["group"]]
    else:
        return None, counts
    tallies = [counts["subjects"][s] for s in subjects if s in counts["subjects"]]
    found = {key: sum(t[key] for t in tallies) for key in ("n", *KINDS, "net")}
    return name, {**found, "delta": found["net"] / found["n"] if found["n"] else 0.0}


def _chart(counts: dict, width: int, scope: str | None = None) -> dict:
    """One bar per kind of flip (in the subject or group the filters name, if any)."""
    width = min(width, 560)
    largest = max(1, *(counts[k] for k in KINDS))
    x = Linear((0, largest), (8, width - 70))
    marks = []
    for i, kind in enumerate(KINDS):
        top = 8 + i * 46
        marks.append(label(8, top + 14, KIND_WORDS[kind], "fig-tick", "start"))
        marks.append(rect(x(0), max(x(counts[kind]), x(0) + 1), top + 20, top + 38, BAR_CLASSES[kind],
                          f"{KIND_WORDS[kind]}: {counts[kind]:,}"))
        marks.append(label(max(x(counts[kind]), x(0) + 1) + 6, top + 34, f"{counts[kind]:,}", "fig-tick", "start"))
    return figure(width, 8 + 3 * 46 + 4, f"How many questions flipped{f' in {scope}' if scope else ''}, by kind", marks)


def error_view(message: str, width: int) -> dict:
    text = f"Could not compare these runs: {message}"
    return {"summary": [text], "figure": figure(min(width, 560), 40, "No chart: the runs could not be compared",
                                                [label(8, 24, "No chart: see the message above", "fig-caption", "start")]),
            "numbers": {"error": message}, "rows": [], "subjects": [], "lean": [], "error": text,
            "pages": {"page": 1, "of": 1, "shown": 0, "first": 1}, "page_links": {}, "published_runs": [],
            "subject_choices": []}


def view(state: dict, context: dict, live_forms: Mapping[str, LiveForm]) -> dict:
    try:
        paired, source = _pairs(state, context)
    except (RunFormatError, ValueError) as error:
        return error_view(str(error), state["width"])
    pairs = paired["pairs"]
    before, after = [a for a, _ in pairs], [b for _, b in pairs]
    counts = question_flips([float(a.correct) for a in before], [float(b.correct) for b in after],
                            [a.answer for a in before], [b.answer for b in after], [a.subject for a in before])
    groups = context.get("subject_groups") or {}
    chosen = []
    for (a, b), kind in zip(pairs, counts["kinds"], strict=True):
        if kind is None or state["kind"] not in (ANY, kind):
            continue
        if state["subject"] not in (ANY, a.subject) or state["group"] not in (ANY, groups.get(a.subject)):
            continue
        if state["letter"] not in (ANY, a.answer, b.answer):
            continue
        chosen.append((a, b, kind))
    if state["sort"] == "moved":  # furthest first (a stable sort: ties keep the subject order); none known last
        chosen.sort(key=lambda t: -abs(_moved(t[0], t[1])) if _moved(t[0], t[1]) is not None else 1.0)
    pages = max(1, -(-len(chosen) // PAGE_SIZE))
    page = min(state["page"], pages)
    shown = [_row(a, b, kind, live_forms) for a, b, kind in chosen[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]]
    scope, scoped = _scope(state, counts, groups)

    def flipped(tally: dict, where: str = "") -> str:
        return (f"{sum(tally[k] for k in KINDS):,} of {tally['n']:,} questions{where} flipped: "
                f"{tally['right_to_wrong']:,} right to wrong, {tally['wrong_to_right']:,} wrong to right, "
                f"{tally['other_wrong']:,} wrong in both with another answer.")

    summary = [
        *([flipped(scoped, f" in {scope}"), f"In {scope}: net {scoped['net']:+,} questions over {scoped['n']:,}, a "
           f"change of {100 * scoped['delta']:+.2f} points, the gate's for these subjects."] if scope else []),
        flipped(counts) if not scope else f"Over all the questions: {flipped(counts)}",
        f"From {source}" + (f", {paired['dropped']:,} questions in only one run left out" if paired["dropped"] else "")
        + (", matched by subject and question text" if paired["matched_by"] == "text" else "") + ".",
        f"Net {counts['net']:+,} questions over {counts['n']:,}: a paired delta of {100 * counts['delta']:+.2f} "
        "points, the release gate's.",
        f"{len(chosen):,} flipped {'question matches' if len(chosen) == 1 else 'questions match'} the filters; "
        f"page {page} of {pages}.",
    ]
    subjects = [{"subject": s.replace("_", " "), **t} for s, t in sorted(counts["subjects"].items())]
    settings = params(context)
    links = {name: "?" + state_query(settings, {**state, "page": number})
             for name, number in (("previous", page - 1), ("next", page + 1)) if 1 <= number <= pages}
    return {
        "summary": summary,
        "figure": _chart(scoped, state["width"], scope),
        "numbers": {key: counts[key] for key in ("n", *KINDS, "net", "delta")},
        "rows": shown,
        "subjects": subjects,
        "lean": [{"role": role, **_lean(run)} for role, run in (("production", before), ("candidate", after))],
        "pages": {"page": page, "of": pages, "shown": len(chosen), "first": (page - 1) * PAGE_SIZE + 1},
        "page_links": links,
        "published_runs": context.get("published_runs") or [],
        # The subject setting's choices for these runs (a reader's files hold their own subjects).
        "subject_choices": [list(choice) for choice in next(p for p in settings if p.name == "subject").choices],
    }


def flips_widget(name: str, live_forms: Mapping[str, LiveForm]) -> Widget:
    """The flips view as a document's widget ``name``, linking each question to the document's
    ``live_forms`` (by benchmark name; the first also takes questions of any other benchmark)."""
    if not live_forms:
        raise ValueError("a flips view needs a live form to link its questions to")
    return Widget(
        name=name, title="Which questions flipped between two runs",
        blurb="Two runs question by question: the ones that went right to wrong, wrong to right, or to another "
              "wrong letter, and the letter each run leans on.",
        height=1400, params=params, view=lambda state, context: view(state, context, live_forms),
        driver="server", script=True,
        accepts={"published_answers": server_object, "published_runs": published_list, "subject_groups": groups_check,
                 "runs": loaded_runs},
    )
