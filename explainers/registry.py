"""The public functions, callable by name with keyword arguments: used by the JSON API and the browser worker.

Both front ends go through :func:`call_public`, so a bad argument gets the same message on the
server and in the browser (the worker's batches go through ``widgetkit.browser.run_batch``).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

from . import calibration, lesson, release_gate, scoring, stats

PUBLIC: dict[str, Callable] = {
    fn.__name__: fn
    for fn in (
        stats.normal_quantile,
        stats.student_t_quantile,
        stats.student_t_cdf,
        stats.standard_error,
        stats.margin_of_error,
        stats.confidence_interval,
        stats.binomial_cdf,
        stats.chance_band,
        stats.is_distinguishable_from_chance,
        scoring.predict,
        scoring.top_two,
        scoring.softmax,
        scoring.accuracy,
        scoring.weighted_accuracy,
        scoring.plain_mean,
        scoring.subject_accuracies,
        scoring.group_accuracies,
        calibration.average_confidence,
        calibration.calibration_gap,
        calibration.calibration_bins,
        calibration.rms_calibration_error,
        calibration.confidence_accuracy_correlation,
        release_gate.paired_delta,
        release_gate.paired_standard_error,
        release_gate.independent_standard_error,
        release_gate.clustered_standard_error,
        release_gate.subject_deltas,
        release_gate.gate_verdict,
        lesson.option_logprob,
        lesson.pick_option,
        lesson.expected_score,
        lesson.ngram_overlap,
        lesson.simulate_contamination,
    )
}


class UnknownFunction(LookupError):
    """The name is not one of the PUBLIC functions."""


def bind_arguments(name: str, kwargs: dict) -> inspect.BoundArguments:
    """Match keyword arguments to a public function's parameters, naming any that are missing or unknown."""
    if name not in PUBLIC:
        raise UnknownFunction(f"no public explainer function named {name!r}")
    if not isinstance(kwargs, dict):
        raise ValueError("arguments must be an object of keyword arguments")
    signature = inspect.signature(PUBLIC[name])
    accepted = list(signature.parameters)
    for key in kwargs:
        if key not in signature.parameters:
            raise ValueError(f"unknown argument {key!r} for {name}; it takes {', '.join(accepted) or 'no arguments'}")
    for param in signature.parameters.values():
        if param.default is inspect.Parameter.empty and param.name not in kwargs:
            raise ValueError(f"missing argument {param.name!r} for {name}")
    return signature.bind(**kwargs)


def call_public(name: str, kwargs: dict):
    """Call PUBLIC[name](**kwargs); raises UnknownFunction or ValueError (with the argument named)."""
    bound = bind_arguments(name, kwargs)
    return PUBLIC[name](*bound.args, **bound.kwargs)


def describe() -> dict:
    """Each public function's parameters (name, default if any) and the first line of its docstring."""
    described = {}
    for name, fn in PUBLIC.items():
        params = []
        for p in inspect.signature(fn).parameters.values():
            entry = {"name": p.name}
            if p.default is not inspect.Parameter.empty:
                entry["default"] = p.default
            params.append(entry)
        described[name] = {"parameters": params, "summary": (fn.__doc__ or "").strip().splitlines()[0]}
    return described
