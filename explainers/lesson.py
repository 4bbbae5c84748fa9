"""The companion benchmarks-lesson functions the annotated paper points to.

Full-option scoring (option_logprob, pick_option), what a partly-knowing model should score
(expected_score), and two contamination tools (ngram_overlap, simulate_contamination).
"""
from __future__ import annotations

import math
import random
import re

from . import checks

NORMALIZATIONS = ("none", "per_token")
MAX_SIMULATED_QUESTIONS = 100_000
_WORD = re.compile(r"[a-z0-9]+")


def option_logprob(token_logprobs: list[float], normalize: str = "none") -> float:
    """How probable the model finds an option's whole text after the question, as a log-probability.

    In words: "add up the log-probabilities of the option's tokens, each given everything before
    it" (normalize="none"), or "average them" (normalize="per_token"). The sum penalises long
    options, since every extra token adds a negative term; the average removes that bias.
    """
    token_logprobs = checks.numbers("token_logprobs", token_logprobs)
    for i, lp in enumerate(token_logprobs):
        if lp > 0:
            raise ValueError(f"token_logprobs[{i}] must be a log-probability (zero or below), got {lp}")
    normalize = checks.choice("normalize", normalize, NORMALIZATIONS)
    total = math.fsum(token_logprobs)
    return total / len(token_logprobs) if normalize == "per_token" else total


def pick_option(options: dict[str, list[float]], normalize: str = "none") -> str:
    """Full-option scoring: the option whose text the model finds most probable (see option_logprob).

    ``options`` maps each letter to its option's token log-probabilities. Ties go to the letter
    listed first.
    """
    options = checks.mapping("options", options)
    scores = {
        letter: option_logprob(checks.numbers(f"options[{letter!r}]", lps), normalize)
        for letter, lps in options.items()
    }
    return max(scores, key=scores.__getitem__)


def expected_score(known: float, options: int = 4) -> float:
    """The accuracy of a model that knows a share ``known`` of the answers and guesses the rest.

    In words: "the questions it knows, plus a 1-in-options lucky guess on each of the others":
    k + (1 − k)/options. Knowing nothing still scores the chance floor 1/options (0.25 on MMLU).
    """
    known = checks.probability("known", known)
    options = checks.whole("options", options, minimum=2)
    return known + (1.0 - known) / options


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngram_overlap(text: str, reference: str, n: int = 8) -> float:
    """The share of the text's word n-grams that also occur in the reference (e.g. training data).

    Words are lowercased runs of letters and digits, so punctuation and spacing do not matter.
    1.0 means every run of n words in the text appears somewhere in the reference, the signature of a
    leaked question; paraphrases slip under it.
    """
    text = checks.text("text", text)
    reference = checks.text("reference", reference)
    n = checks.whole("n", n)
    words = _words(text)
    if len(words) < n:
        raise ValueError(f"n must be at most the number of words in text ({len(words)}), got {n}")
    ref_words = _words(reference)
    ref_grams = {tuple(ref_words[i:i + n]) for i in range(len(ref_words) - n + 1)}
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return sum(1 for g in grams if g in ref_grams) / len(grams)


def simulate_contamination(
    accuracy: float,
    leaked_fraction: float,
    questions: int = 1000,
    memorized_accuracy: float = 1.0,
    seed: int = 0,
) -> dict:
    """Simulate a test where some questions leaked into training: {"expected", "measured", "inflation", "leaked"}.

    Each of ``questions`` questions leaks with probability ``leaked_fraction``; the model answers a
    leaked one right with probability ``memorized_accuracy`` and any other with its true
    ``accuracy``. expected = (1 − f) a + f m; measured is one simulated run (the same for the same
    seed everywhere); inflation = measured − accuracy; leaked counts the leaked questions.
    """
    accuracy = checks.probability("accuracy", accuracy)
    leaked_fraction = checks.probability("leaked_fraction", leaked_fraction)
    memorized_accuracy = checks.probability("memorized_accuracy", memorized_accuracy)
    questions = checks.whole("questions", questions)
    if questions > MAX_SIMULATED_QUESTIONS:
        raise ValueError(f"questions must be at most {MAX_SIMULATED_QUESTIONS}, got {questions}")
    seed = checks.whole("seed", seed, minimum=0)
    rng = random.Random(seed)
    leaked = right = 0
    for _ in range(questions):
        is_leaked = rng.random() < leaked_fraction
        leaked += is_leaked
        right += rng.random() < (memorized_accuracy if is_leaked else accuracy)
    measured = right / questions
    return {
        "expected": (1.0 - leaked_fraction) * accuracy + leaked_fraction * memorized_accuracy,
        "measured": measured,
        "inflation": measured - accuracy,
        "leaked": leaked,
    }
