"""Release gate: is a candidate's score change against production real, or noise?

The default view simulates a whole MMLU test run of two models (or uses two runs a reader loads)
and applies the gate: investigate when the paired delta is beyond the gate's band, two standard
errors clustered by subject widened by Student's t (with the few-subjects rule under 20 subjects;
see ``explainers.gate_verdict``).
"""
from __future__ import annotations

import math
import random

from benchmarks.mmlu.live_runs import live_pairs, model_name, paired_marks, run_pair
from explainers import release_gate
from widgetkit import Param, Widget
from widgetkit.charts import subject_delta_chart
from widgetkit.context import paired_results, sizes
from widgetkit.words import count, gate_error_words, points

SIMULATED = "simulated"


def params(context: dict) -> tuple[Param, ...]:
    pair = run_pair(context.get("live_pairs"))
    source = (Param("source", "Which two runs", "choice", SIMULATED, choices=(
        (SIMULATED, "simulated (settings below)"),  # short enough to show whole at 320 px
        ("live", f"our model, {pair[1]} vs {pair[0]}"),
    )),) if pair else ()
    return source + (
        Param("delta", "True change, candidate minus production", "number", -0.008, -0.05, 0.05, 0.001, percent=True),
        Param("corr", "Correlation between the two models' answers", "number", 0.6, 0.0, 0.95, 0.05),
        Param("spread", "How much subjects differ in their change", "number", 0.02, 0.0, 0.1, 0.005, percent=True),
        Param("base", "Production model's accuracy", "number", 0.85, 0.3, 0.95, 0.01, percent=True),
        Param("draw", "Random draw", "int", 1, 1, 999, 1, help="Another draw of the simulated questions."),
    )


def _irwin_hall(rng: random.Random) -> float:
    """An approximately standard normal number made from 12 uniforms with arithmetic only, so the
    browser (Pyodide) and the server draw bit-identical values."""
    return math.fsum(rng.random() for _ in range(12)) - 6.0


def simulate_pair(sizes: dict[str, int], base: float, delta: float, corr: float, spread: float, draw: int):
    """Simulated per-question results of a production and a candidate model (1 right, 0 wrong).

    Each subject gets its own production accuracy (base ± up to 10 points) and its own true change
    (delta plus a normal amount with standard deviation ``spread``); within a question the two
    models' answers have correlation ``corr``. Returns (candidate, baseline, clusters).
    """
    rng = random.Random(draw)
    candidate, baseline, clusters = [], [], []
    for subject in sorted(sizes):
        p_base = min(0.99, max(0.01, base + 0.1 * (2 * rng.random() - 1)))
        p_cand = min(0.99, max(0.01, p_base + delta + spread * _irwin_hall(rng)))
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


def view(state: dict, context: dict) -> dict:
    results = context.get("results")
    pair = run_pair(context.get("live_pairs"))
    if results:
        candidate, baseline, clusters = results["candidate"], results["baseline"], results["subjects"]
        source = f"your loaded results ({count(len(candidate))} questions)"
    elif state.get("source") == "live" and pair:
        marks = paired_marks(context["live_pairs"], *pair)
        candidate, baseline, clusters = marks["candidate"], marks["baseline"], marks["subjects"]
        source = (f"{model_name(context['live_pairs']['model'])}'s published runs, {pair[1]} (candidate) against "
                  f"{pair[0]} (production), on all {count(len(candidate))} test questions")
    else:
        candidate, baseline, clusters = simulate_pair(
            context["subject_sizes"], state["base"], state["delta"], state["corr"], state["spread"], state["draw"])
        source = f"a simulated run over MMLU's {count(len(candidate))} test questions (draw {state['draw']})"
    multiple = release_gate.GATE_SE_MULTIPLE
    gate = release_gate.gate_verdict(candidate, baseline, clusters, multiple)
    rows = release_gate.subject_deltas(candidate, baseline, clusters)
    delta, se_c, se_p, band = gate["delta"], gate["clustered_se"], gate["paired_se"], gate["band"]
    verdict = "noise" if gate["verdict"] == "ship" else "investigate"
    error = "paired" if gate["gate_se_basis"] == "paired" else "clustered"
    summary = [
        f"Verdict: {verdict}. From {source}: paired delta {delta * 100:+.2f} points, "
        f"clustered standard error {points(se_c, 2)} (paired, unclustered: {points(se_p, 2)}).",
        *gate_error_words(gate, multiple),
        (f"The delta is within {gate['critical']:.2f} {error} standard errors of zero (±{points(band, 2)}): ship it."
         if verdict == "noise" else
         f"The delta is beyond {gate['critical']:.2f} {error} standard errors (±{points(band, 2)}): "
         "a person should look."),
        f"Subjects moved from {rows[0]['delta'] * 100:+.1f} points ({rows[0]['subject'].replace('_', ' ')}) "
        f"to {rows[-1]['delta'] * 100:+.1f} points ({rows[-1]['subject'].replace('_', ' ')}).",
    ]
    return {
        "summary": summary,
        "figure": subject_delta_chart(rows, delta, band, multiple, verdict, state["width"],
                                      f"± {gate['critical']:.2f} {error} standard errors"),
        "numbers": {"delta": delta, "clustered_se": se_c, "paired_se": se_p, "verdict": verdict,
                    "subjects": len(rows), "clustered_se_cr1": gate["clustered_se_cr1"],
                    "few_subjects": gate["few_subjects"], "gate_se": gate["gate_se"],
                    "gate_se_basis": gate["gate_se_basis"], "critical": gate["critical"], "band": band,
                    "df": gate["df"], "p_value": gate["p_value"]},
    }


WIDGET = Widget(
    name="release-gate",
    title="Release gate: is a score change real?",
    blurb="A candidate against production, question by question, with a standard error clustered by subject.",
    height=900, params=params, view=view,
    needs={"subject_sizes": sizes}, accepts={"results": paired_results, "live_pairs": live_pairs}, script=True,
)
