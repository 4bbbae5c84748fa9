"""Turning a model's letter probabilities into an MMLU score, and averaging scores over subjects."""
from __future__ import annotations

import math

from . import checks


def predict(letter_probs: dict[str, float]) -> str:
    """The model's answer: the letter it gives the highest probability.

    In words: "the prediction is whichever letter the model thinks most likely to come next after
    the prompt". Ties go to the letter listed first. {"A": 0.06, "B": 0.81, "C": 0.07, "D": 0.06} → "B".
    """
    letter_probs = checks.mapping("letter_probs", letter_probs)
    scores = {letter: checks.number(f"letter_probs[{letter!r}]", p) for letter, p in letter_probs.items()}
    return max(scores, key=scores.__getitem__)


def top_two(letter_probs: dict[str, float]) -> dict:
    """The two likeliest letters and how the first splits the pair with the second.

    In words: "of the probability the model gives its two favourite letters, the share that goes
    to the first": p₁ / (p₁ + p₂). 0.5 is a dead heat, 1 means the second got nothing. Ties go to
    the letter listed first, as in predict. {"A": 0.486, "B": 0.495, "C": 0.01, "D": 0.009} →
    first "B" (0.495), second "A" (0.486), split 0.495 / 0.981 ≈ 0.505.
    """
    letter_probs = checks.mapping("letter_probs", letter_probs, minimum=2)
    probs = {letter: checks.probability(f"letter_probs[{letter!r}]", p) for letter, p in letter_probs.items()}
    first, second = sorted(probs, key=lambda letter: -probs[letter])[:2]
    pair = probs[first] + probs[second]
    return {"first": first, "second": second, "first_probability": probs[first],
            "second_probability": probs[second], "split": probs[first] / pair if pair > 0 else 0.5}


def softmax(logits: list[float]) -> list[float]:
    """Turn raw scores into probabilities that sum to 1: exp(each) divided by the sum of exp(all).

    The largest logit is subtracted first, which changes nothing in the result but keeps exp from
    overflowing.
    """
    logits = checks.numbers("logits", logits)
    top = max(logits)
    weights = [math.exp(x - top) for x in logits]
    total = math.fsum(weights)
    return [w / total for w in weights]


def accuracy(predictions: list[str], keys: list[str]) -> float:
    """The share of questions where the predicted letter matches the answer key: (1/N) Σ 1(ŷᵢ = yᵢ)."""
    predictions = checks.labels("predictions", predictions)
    keys = checks.labels("keys", keys)
    n = checks.same_length(predictions=predictions, keys=keys)
    return sum(1 for guess, key in zip(predictions, keys, strict=False) if guess == key) / n


def weighted_accuracy(counts: list[int], accuracies: list[float]) -> float:
    """The overall accuracy when every question counts once (micro average).

    In words: "each group's accuracy weighted by how many questions the group has":
    Σ n_g a_g / Σ n_g. Groups of 100 at 0.6 and 300 at 0.3 give 0.375.
    """
    counts = [checks.whole(f"counts[{i}]", c) for i, c in enumerate(checks.sequence("counts", counts))]
    accuracies = checks.probabilities("accuracies", accuracies)
    checks.same_length(counts=counts, accuracies=accuracies)
    return math.fsum(n * a for n, a in zip(counts, accuracies, strict=False)) / sum(counts)


def plain_mean(values: list[float]) -> float:
    """The plain average of group or subject scores, each counting once (macro average).

    Groups at 0.6 and 0.3 give 0.45, whatever their sizes.
    """
    values = checks.numbers("values", values)
    return math.fsum(values) / len(values)


def subject_accuracies(predictions: list[str], keys: list[str], subjects: list[str]) -> dict[str, dict]:
    """Per-subject results: {subject: {"n": questions, "correct": right answers, "accuracy": share}}.

    The three lists run over the same questions, in the same order.
    """
    predictions = checks.labels("predictions", predictions)
    keys = checks.labels("keys", keys)
    subjects = checks.labels("subjects", subjects)
    checks.same_length(predictions=predictions, keys=keys, subjects=subjects)
    tally: dict[str, list[int]] = {}
    for guess, key, subject in zip(predictions, keys, subjects, strict=False):
        right_and_total = tally.setdefault(subject, [0, 0])
        right_and_total[0] += guess == key
        right_and_total[1] += 1
    return {s: {"n": total, "correct": right, "accuracy": right / total} for s, (right, total) in tally.items()}


def group_accuracies(subject_results: dict[str, dict], subject_groups: dict[str, str]) -> dict[str, dict]:
    """Roll subject results up into groups (humanities, social sciences, STEM, other).

    ``subject_results`` is what subject_accuracies returns (each subject needs "n" and "accuracy");
    ``subject_groups`` names each subject's group. A group's accuracy is question-weighted, as in
    the paper's Table 1: {group: {"n": questions, "subjects": count, "accuracy": share}}.
    """
    subject_results = checks.mapping("subject_results", subject_results)
    subject_groups = checks.mapping("subject_groups", subject_groups)
    for subject, group in subject_groups.items():  # every group a name, also those of subjects not in the results
        checks.text(f"subject_groups[{subject!r}]", group)
    sums: dict[str, list[float]] = {}
    for subject, result in subject_results.items():
        if subject not in subject_groups:
            raise ValueError(f"subject_groups has no group for subject {subject!r}")
        group = checks.text(f"subject_groups[{subject!r}]", subject_groups[subject])
        result = checks.mapping(f"subject_results[{subject!r}]", result)
        for field in ("n", "accuracy"):
            if field not in result:
                raise ValueError(f"subject_results[{subject!r}] needs {field!r}")
        n = checks.whole(f"subject_results[{subject!r}]['n']", result["n"])
        acc = checks.probability(f"subject_results[{subject!r}]['accuracy']", result["accuracy"])
        entry = sums.setdefault(group, [0, 0.0, 0])
        entry[0] += n
        entry[1] += n * acc
        entry[2] += 1
    return {g: {"n": n, "subjects": k, "accuracy": right / n} for g, (n, right, k) in sums.items()}
