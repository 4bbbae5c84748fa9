"""The release gate's examples (benchmarks/gate_widget.py shows them): what a document draws them
from (:class:`GateExamples`), simulated pairs of runs, and one example per dashboard shape, each
saying which of its parts are simulated. Sans I/O: it runs in the reader's browser too, and draws
bit-identical numbers there (:func:`simulate_pair`).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from . import registry
from .gate import compare
from .live_runs import GENERATIVE, model_name, paired_marks, run_of, run_pair

SIMULATED, PUBLISHED = "simulated", "live"
# When the server has no subject sizes (no data files), the examples simulate 100 questions in each
# of the benchmark's subjects; without subject groups, the knowledge example groups the subjects
# itself, in alphabetical quarters, and says so.
FALLBACK_SIZE = 100
NOISE_SPREAD = 0.005  # the examples' spread of the subjects' true changes (the setting's own default is 2 points)


@dataclass(frozen=True)
class GateExamples:
    """What a document's gate draws its examples from: ``benchmark``, the one whose published runs
    (``live_pairs``) and test subjects it shows, with ``subjects`` of them when the server has no
    sizes; and the contamination example's held-out set, ``holdout_groups`` of the benchmark
    ``holdout`` (its task's group words), ``holdout_size`` simulated questions in each, as its
    published run samples them. Benchmarks by their registry names."""

    benchmark: str
    subjects: int
    holdout: str
    holdout_groups: tuple[str, ...]
    holdout_size: int = 100

    @property
    def task(self):
        return registry.task(self.benchmark)

    @property
    def chance(self) -> float:
        """The chance a guesser has on the benchmark's options (MMLU's four: 0.25): letter scores at
        it mean no knowledge to keep."""
        return 1 / len(self.task.letters)



def _irwin_hall(rng: random.Random) -> float:
    """An approximately standard normal number made from 12 uniforms with arithmetic only, so the
    browser (Pyodide) and the server draw bit-identical values."""
    return math.fsum(rng.random() for _ in range(12)) - 6.0


def simulate_pair(sizes: dict[str, int], base: float, delta: float, corr: float, spread: float, draw: int,
                  shift: dict[str, float] | None = None):
    """Simulated per-question results of a production and a candidate model (1 right, 0 wrong).

    Each subject gets its own production accuracy (base ± up to 10 points) and its own true change
    (delta, plus ``shift[subject]`` where given, plus a normal amount with standard deviation
    ``spread``); within a question the two models' answers have correlation ``corr``. Returns
    (candidate, baseline, clusters).
    """
    rng = random.Random(draw)
    shift = shift or {}
    candidate, baseline, clusters = [], [], []
    for subject in sorted(sizes):
        p_base = min(0.99, max(0.01, base + 0.1 * (2 * rng.random() - 1)))
        p_cand = min(0.99, max(0.01, p_base + delta + shift.get(subject, 0.0) + spread * _irwin_hall(rng)))
        both = p_base * p_cand + corr * (p_base * (1 - p_base) * p_cand * (1 - p_cand)) ** 0.5
        both = min(max(both, max(0.0, p_base + p_cand - 1)), min(p_base, p_cand))
        only_base, only_cand = p_base - both, p_cand - both
        for _ in range(sizes[subject]):
            u = rng.random()
            if u < both:
                b, c = 1, 1
            elif u < both + only_base:
                b, c = 1, 0
            elif u < both + only_base + only_cand:
                b, c = 0, 1
            else:
                b, c = 0, 0
            baseline.append(b)
            candidate.append(c)
            clusters.append(subject)
    return candidate, baseline, clusters


def _pair(sizes: dict[str, int], base: float, delta: float, draw: int, corr: float = 0.6, spread: float = NOISE_SPREAD,
          shift: dict[str, float] | None = None) -> dict:
    candidate, baseline, subjects = simulate_pair(sizes, base, delta, corr, spread, draw, shift)
    return {"subjects": subjects, "baseline": baseline, "candidate": candidate}


def subject_sizes(context: dict, examples: GateExamples) -> dict[str, int]:
    """The benchmark's test subjects with their sizes: from the published runs' order, or the
    dataset's, or (neither given) FALLBACK_SIZE in each of its subjects."""
    if context.get("live_pairs"):
        return {name: size for name, size in context["live_pairs"]["order"]}
    return dict(context.get("subject_sizes")
                or {f"subject {i + 1:02d}": FALLBACK_SIZE for i in range(examples.subjects)})


def _groups_for(context: dict, sizes: dict[str, int]) -> tuple[dict[str, str], bool]:
    """Subject → group, and whether the groups are the benchmark's own (False: alphabetical quarters)."""
    groups = {s: g for s, g in (context.get("subject_groups") or {}).items() if s in sizes}
    if len(set(groups.values())) >= 2:
        return groups, True
    names = sorted(sizes)
    return {s: f"quarter {1 + 4 * i // len(names)}" for i, s in enumerate(names)}, False


def _published(context: dict, examples: GateExamples) -> tuple[dict, str] | None:
    pairs = context.get("live_pairs")
    pair = run_pair(pairs)
    if not pair:
        return None
    production, candidate = (run_of(pairs, key) for key in pair)
    words = (f"{model_name(pairs['model'])}'s published runs (this site's live model, letter scoring) over the "
             f"whole {examples.task.title} test ({production['questions']:,} questions): its {production['key']} "
             f"run (production) against its {candidate['key']} run (candidate)")
    return paired_marks(pairs, *pair), words


def _published_format(context: dict, examples: GateExamples) -> tuple[dict, dict, str] | None:
    """The real format regression in the published runs: the prompt without worked examples
    (candidate) against the prompt with them (production), by letter scoring and by generation."""
    pairs = context.get("live_pairs")
    letter, generative = run_pair(pairs), run_pair(pairs, GENERATIVE)
    if not letter or not generative:
        return None
    fewest, most = (run_of(pairs, key) for key in generative)
    words = (f"Real runs, nothing simulated: {model_name(pairs['model'])}'s published runs (this site's live model) "
             f"over the whole {examples.task.title} test ({fewest['questions']:,} questions), as if a release had dropped the "
             f"{most['shots']} worked examples from the prompt: production is the {most['shots']}-shot prompt, "
             f"candidate the {fewest['shots']}-shot one, each scored by letter probabilities and by generation "
             f"(the harness's {examples.task.name}_generative). Without examples the model mostly writes no letter before its "
             f"first line break.")
    return paired_marks(pairs, *reversed(letter)), paired_marks(pairs, *reversed(generative)), words


def example(source: str, state: dict, context: dict,
            examples: GateExamples) -> tuple[dict, dict | None, dict | None, dict, str]:
    """(main pair, generative pair, held-out pair, groups, description) for a chosen source."""
    sizes = subject_sizes(context, examples)
    groups = {s: g for s, g in (context.get("subject_groups") or {}).items() if s in sizes}
    n = sum(sizes.values())
    title = examples.task.title
    if source == PUBLISHED and _published(context, examples):
        main, words = _published(context, examples)
        return main, None, None, groups, f"From {words}. Real runs, nothing simulated."
    if source == "noise":
        return (_pair(sizes, 0.6, 0.0, 11), None, None, groups,
                f"Simulated: two models whose true overall scores are the same, over {title}'s {n:,} test questions "
                f"in {len(sizes)} subjects; each subject still gets its own small true change (a spread of "
                f"{NOISE_SPREAD * 100:g} points around 0), and one run's luck does the rest.")
    if source == "knowledge":
        groups, own = _groups_for(context, sizes)
        lost = "STEM" if own and "STEM" in groups.values() else sorted(set(groups.values()))[0]
        shift = {s: -0.12 for s, g in groups.items() if g == lost}
        where = f"{title}'s own subject groups" if own else "the subjects in alphabetical quarters"
        return (_pair(sizes, 0.6, 0.0, 12, shift=shift), None, None, groups,
                f"Simulated: a candidate that lost 12 points on every {lost} subject and nothing elsewhere, over "
                f"{title}'s {n:,} test questions ({where}).")
    real_format = _published_format(context, examples) if source == "format" else None
    if real_format:
        main, generative, words = real_format
        return main, generative, None, groups, words
    if source == "format":
        return (_pair(sizes, 0.6, 0.0, 13), _pair(sizes, 0.55, -0.08, 14), None, groups,
                f"Simulated (no pair of generative runs is published): letter scoring unchanged over {title}'s {n:,} test "
                f"questions, while the candidate's written answers (generative scoring) drop by 8 points, as a "
                f"broken chat template or stop sequence would make them.")
    if source == "contamination":
        holdout = _pair({g: examples.holdout_size for g in examples.holdout_groups}, 0.15, 0.0, 15)
        held = registry.task(examples.holdout)
        count = f"{examples.holdout_size * len(examples.holdout_groups):,}"
        each = f"{examples.holdout_size} in each of its {len(examples.holdout_groups)} {held.group_words[1]}"
        found = _published(context, examples)
        public = compare(found[0]) if found else None
        if public and public["verdict"] == "investigate" and public["delta"] > 0:
            main, words = found
            return (main, None, holdout, groups,
                    f"Part simulated. Public set: {words}, real. Held-out set: simulated, {count} {held.title} "
                    f"questions ({each}, as our published {held.title} run samples them) on which the candidate "
                    f"did not move; only one {held.title} run is published, so this pairing shows what the "
                    f"signature looks like, not a finding about our model (its 5-shot gain comes from the "
                    f"examples in the prompt).")
        return (_pair(sizes, 0.6, 0.03, 16), None, holdout, groups,
                f"Simulated: the candidate rose 3 points on {title}'s {n:,} public test questions but not on {count} "
                f"held-out {held.title} questions ({each}).")
    candidate, baseline, subjects = simulate_pair(sizes, state["base"], state["delta"], state["corr"],
                                                  state["spread"], state["draw"])
    return ({"subjects": subjects, "baseline": baseline, "candidate": candidate}, None, None, groups,
            f"Simulated: a run over {title}'s {n:,} test questions with the settings below (draw {state['draw']}).")


