"""Anatomy of an MMLU prompt (Figure 1): the exact text the model reads, part by part.

The prompt text is data (the subject's real dev and test files), so this widget is drawn by the
server and the browser asks the widget JSON route for each new view.
"""
from __future__ import annotations

from benchmarks.mmlu.figures import paper_figures
from benchmarks.mmlu.prompt import MAX_SHOTS, prompt_parts
from explainers import scoring
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


def _prompt(state: dict, dataset) -> dict:
    """The exact prompt for the state, in labelled parts, with its question's key."""
    subject = state["subject"]
    questions = dataset.questions(subject, "test")
    question = questions[state["q"] - 1]
    shots = dataset.questions(subject, "dev")[: state["shots"]]
    parts = prompt_parts(subject, question.question, question.choices, shots)
    return {
        "parts": [{"kind": p.kind, "text": p.text, "explain": PART_EXPLANATIONS[p.kind]} for p in parts],
        "key": question.answer,
        "questions": len(questions),
        "characters": sum(len(p.text) for p in parts),
        "shots": len(shots),
    }


def view(state: dict, context: dict) -> dict:
    prompt = _prompt(state, context["dataset"])
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
    }


WIDGET = Widget(
    name="prompt-anatomy",
    title="Anatomy of an MMLU prompt (Figure 1)",
    blurb="Pick a subject and a number of worked examples; this is the exact text the model reads.",
    height=1100, params=params, normalise=normalise, view=view, driver="server", script=True, style=True,
    fragments={"prompt-text": "prompt-anatomy-text.html"},
    primary=1,  # the prompt itself is long: the subject chooser alone goes under it
    needs={"subjects": titled_sizes, "dataset": server_object},
)
