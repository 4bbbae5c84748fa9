"""Input checks shared by every explainer function.

Each check raises ValueError with a message that names the offending argument, so the JSON API
can pass the message straight to the reader, and the browser shows the same words.
Numbers arrive from JSON (the API) or from JavaScript (the worker), so the checks also reject
booleans and strings posing as numbers.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

# Far beyond any real count of questions, and small enough that sums and products stay exact floats.
LARGEST_WHOLE = 10**15
MAX_LEVEL = 1 - 1e-9  # a 99.9999999 % interval; /api/openapi.json says the same


def number(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or explain why it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {type(value).__name__}")
    if isinstance(value, int) and abs(value) > LARGEST_WHOLE:  # before isfinite, which cannot take a huge int
        raise ValueError(f"{name} must be at most {LARGEST_WHOLE:g} in size")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    # Sums of numbers near the float limit overflow (math.fsum raises), and no statistic here needs them.
    if abs(value) > LARGEST_WHOLE:
        raise ValueError(f"{name} must be at most {LARGEST_WHOLE:g} in size")
    return float(value)


def probability(name: str, value: object) -> float:
    """A number between 0 and 1 inclusive."""
    p = number(name, value)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {value}")
    return p


def level(value: object) -> float:
    """A confidence level strictly between 0 and 1 (0.95 for a 95 % interval)."""
    x = number("level", value)
    if not 0.0 < x < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {value}")
    if x > MAX_LEVEL:  # closer to 1 and the normal quantile of (1 + level) / 2 is that of 1: infinite
        raise ValueError(f"level must be at most {MAX_LEVEL}, got {value}")
    return x


def whole(name: str, value: object, minimum: int = 1) -> int:
    """A whole number from ``minimum`` to LARGEST_WHOLE."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if value > LARGEST_WHOLE:
        raise ValueError(f"{name} must be at most {LARGEST_WHOLE:g}, got {value}")
    return value


def choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """One of a fixed set of option strings."""
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value  # type: ignore[return-value]


def sequence(name: str, value: object, minimum: int = 1) -> list:
    """A list (or tuple) with at least ``minimum`` items."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a list, got {type(value).__name__}")
    if len(value) < minimum:
        raise ValueError(f"{name} must have at least {minimum} item{'s' if minimum != 1 else ''}, got {len(value)}")
    return list(value)


# The list checks below take a plain float (or, for scores, 0, 1, True or False) as it is, without the
# per-item call and the item's name built for a message: the gate and the calibration table check
# whole runs (14,042 answers, many times over) and spent most of their time there. Anything else
# goes through the full check, which gives the same value or names the item that is wrong.

def numbers(name: str, value: object, minimum: int = 1) -> list[float]:
    """A list of finite numbers."""
    return [x if type(x) is float and -LARGEST_WHOLE <= x <= LARGEST_WHOLE else number(f"{name}[{i}]", x)
            for i, x in enumerate(sequence(name, value, minimum))]


def probabilities(name: str, value: object, minimum: int = 1) -> list[float]:
    """A list of numbers between 0 and 1."""
    return [x if type(x) is float and 0.0 <= x <= 1.0 else probability(f"{name}[{i}]", x)
            for i, x in enumerate(sequence(name, value, minimum))]


def labels(name: str, value: object, minimum: int = 1) -> list[str]:
    """A list of strings (answer letters, subject names)."""
    items = sequence(name, value, minimum)
    if set(map(type, items)) <= _STR:  # every item a plain string: one pass in C
        return items
    for i, x in enumerate(items):
        if not isinstance(x, str):
            raise ValueError(f"{name}[{i}] must be a string, got {type(x).__name__}")
    return items


def text(name: str, value: object) -> str:
    """A string."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    return value


def mapping(name: str, value: object, minimum: int = 1) -> dict:
    """A dict (a JSON object) with string keys and at least ``minimum`` entries."""
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be an object mapping names to values, got {type(value).__name__}")
    if len(value) < minimum:
        raise ValueError(f"{name} must have at least {minimum} entr{'ies' if minimum != 1 else 'y'}")
    for key in value:
        if not isinstance(key, str):
            raise ValueError(f"{name} keys must be strings, got {key!r}")
    return value


def same_length(**named: list) -> int:
    """All the given lists have the same length; return it."""
    lengths = {name: len(items) for name, items in named.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"{' and '.join(lengths)} must have the same length ({described})")
    return next(iter(lengths.values()))


def scores(name: str, value: object, minimum: int = 1) -> list[float]:
    """Per-question scores between 0 and 1: usually 1 for right and 0 for wrong (true/false also accepted)."""
    items = sequence(name, value, minimum)
    if set(map(type, items)) <= _UNIT_TYPES and set(items) <= _UNIT.keys():  # all 0 and 1 (or False and True)
        return list(map(float, items))
    return [x if type(x) is float and 0.0 <= x <= 1.0 else _UNIT[x] if type(x) in _UNIT_TYPES and x in _UNIT
            else probability(f"{name}[{i}]", x) for i, x in enumerate(items)]


_UNIT = {0: 0.0, 1: 1.0}  # False and True look up as 0 and 1
_UNIT_TYPES = {int, bool}
_STR = {str}
