"""Two runs question by question: which answers flipped, and which letter a model leans on.

``question_flips`` sorts each question two runs both answered into one of four kinds: right in
both or wrong with the same answer in both (no flip), right to wrong, wrong to right, or wrong in
both with different answers. Its counts are the release gate's delta written as questions: the
net flips (wrong to right minus right to wrong) over the questions is the paired delta, overall and
within each subject, exactly (both are counts of the same 0/1 differences).

``letter_lean`` sets the share of each letter a run predicted beside the share of each letter in
the keys, and the accuracy of always answering the run's favourite letter beside its own: a model
that answers one letter almost always scores about that letter's share of the keys, whatever it knows.
"""
from __future__ import annotations

from . import checks

KINDS = ("right_to_wrong", "wrong_to_right", "other_wrong")
NO_ANSWER = ""  # a run that gave no letter (a generative answer with none in it)


def flip_kind(baseline_correct: bool, candidate_correct: bool, baseline_answer: str | None,
              candidate_answer: str | None) -> str | None:
    """The kind of flip between two answers to one question: "right_to_wrong", "wrong_to_right",
    "other_wrong" (wrong in both, with different answers; no answer counts as an answer of its
    own), or None (no flip: right in both, or the same wrong answer)."""
    if baseline_correct and not candidate_correct:
        return "right_to_wrong"
    if candidate_correct and not baseline_correct:
        return "wrong_to_right"
    if not baseline_correct and (baseline_answer or NO_ANSWER) != (candidate_answer or NO_ANSWER):
        return "other_wrong"
    return None


def _answers(name: str, value: object, n: int | None = None) -> list[str]:
    found = checks.sequence(name, value, minimum=1)
    for i, answer in enumerate(found):
        if answer is not None and not isinstance(answer, str):
            raise ValueError(f"{name}[{i}] must be a letter or null, got {answer!r}")
    if n is not None and len(found) != n:
        raise ValueError(f"{name} must have one answer per question ({n}), got {len(found)}")
    return [answer or NO_ANSWER for answer in found]


def question_flips(baseline: list[float], candidate: list[float], baseline_answers: list[str | None],
                   candidate_answers: list[str | None], clusters: list[str]) -> dict:
    """Each question's kind of flip and the counts, overall and per subject.

    ``baseline`` and ``candidate`` are the two runs' per-question scores (1 right, 0 wrong) over the
    same questions in the same order, ``*_answers`` the letters they answered (None for none),
    ``clusters`` each question's subject. Returns {"kinds": [kind or None per question], "n",
    "right_to_wrong", "wrong_to_right", "other_wrong", "net", "delta", "subjects": {subject: {"n",
    "right_to_wrong", "wrong_to_right", "other_wrong", "net", "delta"}}}; ``net`` is wrong_to_right
    minus right_to_wrong and ``delta`` is net / n, the paired delta.
    """
    baseline = checks.scores("baseline", baseline, minimum=1)
    candidate = checks.scores("candidate", candidate, minimum=1)
    n = checks.same_length(baseline=baseline, candidate=candidate)
    if any(score not in (0.0, 1.0) for score in (*baseline, *candidate)):
        raise ValueError("baseline and candidate must be 0 or 1 per question (a flip is right or wrong)")
    before = _answers("baseline_answers", baseline_answers, n)
    after = _answers("candidate_answers", candidate_answers, n)
    clusters = checks.labels("clusters", clusters)
    if len(clusters) != n:
        raise ValueError(f"clusters must have one subject per question ({n}), got {len(clusters)}")
    kinds = [flip_kind(b == 1.0, c == 1.0, x, y) for b, c, x, y in zip(baseline, candidate, before, after, strict=True)]
    subjects: dict[str, dict] = {}
    for kind, subject in zip(kinds, clusters, strict=True):
        tally = subjects.setdefault(subject, {"n": 0, **{k: 0 for k in KINDS}})
        tally["n"] += 1
        if kind:
            tally[kind] += 1
    for tally in subjects.values():
        _net(tally)
    total = {"n": n, **{k: sum(t[k] for t in subjects.values()) for k in KINDS}}
    return {"kinds": kinds, **_net(total), "subjects": subjects}


def _net(tally: dict) -> dict:
    tally["net"] = tally["wrong_to_right"] - tally["right_to_wrong"]
    tally["delta"] = tally["net"] / tally["n"]
    return tally


def letter_lean(predictions: list[str | None], keys: list[str]) -> dict:
    """The letters a run answered beside the letters of the keys.

    Returns {"n", "letters" (every letter of the keys and the answers, sorted), "predicted": {letter:
    share of the answers}, "keys": {letter: share of the keys}, "no_answer": share of questions with
    no letter answered, "accuracy": share answered with the key, "favourite": the letter answered
    most (the first in order on a tie), "favourite_accuracy": the share of keys that are the
    favourite (the accuracy of always answering it)}.
    """
    keys = checks.labels("keys", keys)
    answers = _answers("predictions", predictions, len(keys))
    n = len(keys)
    letters = sorted({*keys, *(a for a in answers if a)})
    predicted = {letter: sum(a == letter for a in answers) / n for letter in letters}
    key_share = {letter: sum(k == letter for k in keys) / n for letter in letters}
    favourite = max(letters, key=lambda letter: (predicted[letter], -letters.index(letter)))
    if predicted[favourite] == 0:
        raise ValueError("predictions hold no letter at all: there is no favourite to compare")
    return {
        "n": n,
        "letters": letters,
        "predicted": predicted,
        "keys": key_share,
        "no_answer": sum(not a for a in answers) / n,
        "accuracy": sum(a == k for a, k in zip(answers, keys, strict=True)) / n,
        "favourite": favourite,
        "favourite_accuracy": key_share[favourite],
    }
