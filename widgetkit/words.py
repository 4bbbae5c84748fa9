"""How numbers are written in widget sentences and labels, the same way the pages write them."""
from __future__ import annotations

import json


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
