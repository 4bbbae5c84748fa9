"""Anatomy of an MMLU prompt (Figure 1): the exact text the model reads, part by part.

The prompt text is data (the subject's real dev and test files), so this widget is drawn by the
server and the browser asks the widget JSON route for each new view. In the static export, where no
server answers, the page fetches the questions a view is made of (``shipped``: the test question, from
the files of 25 the export writes beside the document for its live form, and the subject's worked
examples, ``static_files``) and the Pyodide worker runs this same view on them; the highlighted
prompt is this module's markup (``prompt_markup``) on both.
"""
from __future__ import annotations

from html import escape

from benchmarks.mmlu.data import Question
from benchmarks.mmlu.figures import paper_figures
from benchmarks.mmlu.prompt import MAX_SHOTS, prompt_parts
from explainers import checks, scoring
from widgetkit import Param, Widget
from widgetkit.context import server_object, titled_sizes
from widgetkit.scene import Linear, figure, label, rect
from widgetkit.words import plural

# Words for each part of a prompt, shown beside the highlighted text.
PART_EXPLANATIONS = {
    "header": "Names the subject; the same line opens every prompt in this subject.",
    "shot": "Taken from the subject's dev set, with its answer letter filled in.",
    "question": "The test question the model is asked.",
    "option": "Four of them, lettered A to D.",
    "answer_cue": "After “Answer:” the most natural next token is now a letter; its probability is compared across A, B, C, D.",
}


def params(context: dict) -> tuple[Param, ...]:
    subjects = context.get("subjects", {})
    return (
        Param("subject", "Subject", "choice", "college_medicine",
              choices=tuple((name, info["title"]) for name, info in sorted(subjects.items()))),
        Param("shots", "Worked examples (shots)", "int", 1, 0, MAX_SHOTS, 1),
        Param("q", "Test question number", "int", 1, 1, 1534, 1),
    )


def normalise(state: dict, context: dict) -> tuple[dict, list[str]]:
    """A question number past the subject's last question shows the last one."""
    size = context["subjects"].get(state["subject"], {}).get("test")
    if size is not None and state["q"] > size:
        return {**state, "q": size}, [f"{state['subject'].replace('_', ' ')} has {size} test questions; showing number {size}."]
    return state, []


def shipped_questions(name: str, value: object) -> dict:
    """The questions the static export's page fetched for a view: {"subject", "q", "count", "test":
    question, "dev": [question, ...]}, each question {"question", "choices": four texts, "key": a letter}."""
    found = checks.mapping(name, value)
    checks.text(f"{name}.subject", found.get("subject"))
    checks.whole(f"{name}.q", found.get("q"))
    checks.whole(f"{name}.count", found.get("count"))
    dev = checks.sequence(f"{name}.dev", found.get("dev"), minimum=0)
    if len(dev) > MAX_SHOTS:
        raise ValueError(f"{name}.dev holds at most {MAX_SHOTS} worked examples, got {len(dev)}")
    for where, question in [("test", found.get("test")), *((f"dev[{i}]", shot) for i, shot in enumerate(dev))]:
        question = checks.mapping(f"{name}.{where}", question)
        checks.text(f"{name}.{where}.question", question.get("question"))
        if len(checks.labels(f"{name}.{where}.choices", question.get("choices"), minimum=4)) != 4:
            raise ValueError(f"{name}.{where}.choices must be four texts")
        checks.choice(f"{name}.{where}.key", question.get("key"), ("A", "B", "C", "D"))
    return found


def _as_question(subject: str, split: str, index: int, shipped: dict) -> Question:
    return Question(subject, split, index, shipped["question"], tuple(shipped["choices"]), shipped["key"])


def _questions(state: dict, context: dict) -> tuple[Question, int, list[Question]]:
    """The test question asked, how many the subject has, and its worked examples: from the dataset
    (the server), or as the page fetched them (the static export: ``shipped``)."""
    subject, number = state["subject"], state["q"]
    shipped = context.get("shipped")
    if shipped is None:
        if "dataset" not in context:
            raise ValueError("prompt-anatomy needs context.dataset (the server) or context.shipped (the export's files)")
        dataset = context["dataset"]
        questions = dataset.questions(subject, "test")
        return questions[number - 1], len(questions), list(dataset.questions(subject, "dev"))
    if (shipped["subject"], shipped["q"]) != (subject, number):
        raise ValueError(f"the page fetched {shipped['subject']} question {shipped['q']}, not {subject} question {number}")
    return (_as_question(subject, "test", number - 1, shipped["test"]), shipped["count"],
            [_as_question(subject, "dev", i, shot) for i, shot in enumerate(shipped["dev"])])


def _prompt(state: dict, context: dict) -> dict:
    """The exact prompt for the state, in labelled parts, with its question's key."""
    question, count, examples = _questions(state, context)
    shots = examples[: state["shots"]]
    parts = prompt_parts(state["subject"], question.question, question.choices, shots)
    return {
        "parts": [{"kind": p.kind, "text": p.text, "explain": PART_EXPLANATIONS[p.kind]} for p in parts],
        "key": question.answer,
        "questions": count,
        "characters": sum(len(p.text) for p in parts),
        "shots": len(shots),
    }


def prompt_markup(parts: list[dict], widget: str) -> str:
    """The prompt's parts, each highlighted, focusable and described by its legend entry (escaped
    here: the page and the worker put it in as it is)."""
    return "".join(f'<span class="part part-{p["kind"]}" tabindex="0" aria-describedby="w-{widget}-legend-{p["kind"]}" '
                   f'title="{escape(p["explain"])}">{escape(p["text"])}</span>' for p in parts)


def view(state: dict, context: dict) -> dict:
    prompt = _prompt(state, context)
    probs = paper_figures()["examples"]["letter_probs"]
    choice = scoring.predict(probs)

    examples = plural(prompt["shots"], "worked example") if prompt["shots"] else "no worked examples (zero-shot)"
    summary = [
        f"Question {state['q']} of {prompt['questions']} in {state['subject'].replace('_', ' ')}, with {examples}: "
        f"{prompt['characters']:,} characters of prompt. The answer key is {prompt['key']}.",
        "Illustrative letter probabilities: " + ", ".join(f"{k} {v:.2f}" for k, v in probs.items())
        + f". The highest is {choice}, so the prediction is {choice}.",
    ]

    width = min(state["width"], 420)  # four short bars: wider would only stretch them
    x = Linear((0, 1), (40, width - 50))
    marks = []
    for i, (letter, p) in enumerate(probs.items()):
        top = 10 + i * 28
        marks.append(label(28, top + 16, letter, "fig-tick fig-key", "end"))
        marks.append(rect(x(0), x(p), top, top + 20, "fig-bar-prob" + (" chosen" if letter == choice else ""),
                          f"P({letter}) = {p:.2f}"))
        marks.append(label(x(p) + 6, top + 15, f"{p:.2f}", "fig-tick", "start"))
    return {
        "summary": summary,
        "figure": figure(width, 124, "Illustrative probabilities of the four answer letters", marks),
        "numbers": {"prediction": choice, "probs": probs},
        "prompt": {key: prompt[key] for key in ("parts", "key", "questions", "characters")},
        "explanations": PART_EXPLANATIONS,
        "fragments": {"prompt-text": prompt_markup(prompt["parts"], "prompt-anatomy")},
    }


WIDGET = Widget(
    name="prompt-anatomy",
    title="Anatomy of an MMLU prompt (Figure 1)",
    blurb="Pick a subject and a number of worked examples; this is the exact text the model reads.",
    height=1100, params=params, normalise=normalise, view=view, driver="server", script=True, style=True,
    primary=1,  # the prompt itself is long: the subject chooser alone goes under it
    needs={"subjects": titled_sizes},
    # One of the two: the dataset on the server; in the static export, what the page fetched for the view.
    accepts={"dataset": server_object, "shipped": shipped_questions},
)
