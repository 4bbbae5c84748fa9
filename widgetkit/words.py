"""How numbers are written in widget sentences and labels, the same way the pages write them."""
from __future__ import annotations

import json

from explainers import FEW_SUBJECTS


def pct(share: float, digits: int = 1) -> str:
    """A share (0–1) as a percentage: 0.3 → "30.0%"."""
    return f"{100 * share:.{digits}f}%"


def points(share: float, digits: int = 1) -> str:
    """A difference of shares as percentage points: 0.008 → "0.8 points"."""
    return f"{100 * share:.{digits}f} points"


def count(n: int) -> str:
    """A count with thousands separators: 14042 → "14,042"."""
    return f"{n:,}"


def level_text(level: float) -> str:
    """A confidence level as a percentage without trailing zeros: 0.95 → "95%"."""
    return f"{100 * level:g}%"


def plural(n: int, word: str) -> str:
    """ "1 answer", "2 answers"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def listed(names: list[str]) -> str:
    """Names in a sentence: "a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def shown(value) -> str:
    """A function's result as readers see it: numbers to 4 significant digits, lists and objects inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.4g}"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    return "{" + ", ".join(f"{k}: {shown(v)}" for k, v in value.items()) + "}"


def few_subjects_words(gate: dict) -> list[str]:
    """Below FEW_SUBJECTS subjects, the reader's caution: an error clustered by subject is unreliable,
    so the gate widens its band (gate_error_words says how, for engineers); else nothing."""
    if not gate["few_subjects"]:
        return []
    return [f"Only {plural(gate['subjects'], 'subject')}: an error clustered by subject is unreliable with fewer than "
            f"{FEW_SUBJECTS} (Cameron & Miller 2015) and can come out far too small, even 0 when every subject moves "
            f"alike, so the gate does not rest on it alone and its band is wider."]


def gate_error_words(gate: dict, multiple: float) -> list[str]:
    """What error and band a release gate's verdict rests on, and why, as plain sentences naming the
    statistics (CR1, Student's t): the engineers' part; few_subjects_words is the reader's caution.

    ``gate``: explainers.gate_verdict's result (or a report with its keys); ``multiple``: the
    gate's width on the normal curve. Below FEW_SUBJECTS subjects the first sentence says what the
    gate does instead of resting on a subject-clustered error; with enough subjects it says so when
    the clustered error is the smaller one and the paired one is used.
    """
    df = gate["df"]
    lines = []
    if gate["few_subjects"]:
        lines.append(
            f"With fewer than {FEW_SUBJECTS} subjects the gate uses the larger of the clustered error (with the "
            f"small-sample factor G/(G − 1), CR1) and the paired one, and Student's t with {plural(df, 'degree')} "
            f"of freedom instead of the normal curve.")
    elif gate["gate_se_basis"] == "paired":
        lines.append(
            f"The clustered error ({points(gate['clustered_se_cr1'], 2)}) is smaller than the paired one "
            f"({points(gate['paired_se'], 2)}): the gate uses the paired one rather than rest on the smaller.")
    used = ("the paired error" if gate["gate_se_basis"] == "paired"
            else "the clustered error with the small-sample factor (CR1)")
    lines.append(
        f"The gate's error: {used}, {points(gate['gate_se'], 2)}. Its band: {gate['critical']:.2f} of those "
        f"(Student's t with {plural(df, 'degree')} of freedom, at the level of {multiple:g} on the normal curve), "
        f"±{points(gate['band'], 2)}.")
    return lines
