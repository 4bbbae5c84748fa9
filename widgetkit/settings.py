"""A widget's settings: the schema (one :class:`Param` per control), checking, and the URL query.

A widget's state is its URL query. :func:`parse_state` checks raw values (query text, form values,
or what the browser sends) against the schema and never raises for a reader's input: a bad value
becomes the default or is clamped, with a message saying so. :func:`state_query` writes the query
that reproduces a state, leaving settings at their default out.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

MAX_LIST_ITEMS = 200
MAX_RAW_CHARS = 4000
LOG_STEP = 0.05


@dataclass(frozen=True)
class Param:
    """One setting of a widget, as a form control and as a URL parameter.

    kind: "int" | "number" (clamped to minimum..maximum), "choice" (one of ``choices``),
    "numbers" / "flags" (comma-separated lists of numbers in minimum..maximum / of 0 and 1),
    "set" (comma-separated subset of ``choices``).
    """

    name: str
    label: str
    kind: str
    default: object
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    choices: tuple = ()
    percent: bool = False  # show the value as a percentage next to the control
    help: str = ""
    # "log" for a quantity spanning orders of magnitude: the slider moves along log10 of the value,
    # in steps of LOG_STEP (a power of ten is always a stop: 100 to 1,000 is 20 steps).
    scale: str = "linear"

    def as_dict(self) -> dict:
        return {
            "name": self.name, "label": self.label, "kind": self.kind, "default": self.default,
            "minimum": self.minimum, "maximum": self.maximum, "step": self.step,
            "choices": [list(c) for c in self.choices], "percent": self.percent, "help": self.help,
            "scale": self.scale,
        }

    def default_value(self):
        """The default as a state holds it (a fresh list for list settings)."""
        return list(self.default) if isinstance(self.default, (list, tuple)) else self.default


def shown(raw: object) -> str:
    """A reader's value, shortened for a message (messages are always rendered as text)."""
    text = str(raw)
    return text if len(text) <= 30 else text[:27] + "…"


def _parse_number(param: Param, raw: str) -> tuple[object, list[str]]:
    try:
        value = float(raw)
    except ValueError:
        return param.default, [f"{param.label}: “{shown(raw)}” is not a number; using {param.default}."]
    if value != value or value in (float("inf"), float("-inf")):
        return param.default, [f"{param.label}: “{shown(raw)}” is not a finite number; using {param.default}."]
    messages = []
    if param.kind == "int":
        if value != int(value):
            messages.append(f"{param.label}: {shown(raw)} is not a whole number; rounded to {round(value)}.")
        value = int(round(value))
    low, high = param.minimum, param.maximum
    if value < low or value > high:
        clamped = min(max(value, low), high)
        clamped = int(clamped) if param.kind == "int" else clamped
        messages.append(f"{param.label} must be between {low:g} and {high:g}; {shown(raw)} was changed to {clamped:g}.")
        value = clamped
    return value, messages


def _parse_list_item(param: Param, item: str) -> tuple[object | None, str | None]:
    """One item of a list setting: (value, None) or (None, why it was left out)."""
    if param.kind == "flags":
        if item not in ("0", "1"):
            return None, f"{param.label}: “{shown(item)}” must be 1 (right) or 0 (wrong); it was left out."
        return int(item), None
    try:
        number = float(item)
    except ValueError:
        number = None
    if number is None or not param.minimum <= number <= param.maximum:
        return None, (f"{param.label}: “{shown(item)}” is not a number from {param.minimum:g} to "
                      f"{param.maximum:g}; it was left out.")
    return number, None


def _parse_list(param: Param, raw: str) -> tuple[list, list[str]]:
    items = [item.strip() for item in raw.split(",") if item.strip()]
    messages = []
    if len(items) > MAX_LIST_ITEMS:
        messages.append(f"{param.label}: only the first {MAX_LIST_ITEMS} values are used.")
        items = items[:MAX_LIST_ITEMS]
    values = []
    for item in items:
        value, why = _parse_list_item(param, item)
        if why:
            messages.append(why)
        else:
            values.append(value)
    if not values:
        messages.append(f"{param.label}: no usable values; using the default.")
        return list(param.default), messages
    return values, messages


def _parse_choice(param: Param, text: str) -> tuple[object, list[str]]:
    allowed = [c[0] for c in param.choices]
    if param.kind == "choice":
        if text in allowed:
            return text, []
        return param.default, [f"{param.label}: “{shown(text)}” is not one of the choices; using the default."]
    picked = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in picked if item not in allowed]
    messages = [f"{param.label}: “{shown(unknown[0])}” is not one of the choices; it was left out."] if unknown else []
    return [c for c in allowed if c in picked], messages


def parse_value(param: Param, raw: object) -> tuple[object, list[str]]:
    """One setting's checked value and the messages about it."""
    if raw is None or raw == "" and param.kind != "set":
        return param.default_value(), []
    text = str(raw)[:MAX_RAW_CHARS].strip()
    if param.kind in ("int", "number"):
        return _parse_number(param, text)
    if param.kind in ("choice", "set"):
        return _parse_choice(param, text)
    return _parse_list(param, text)


def parse_state(params: tuple[Param, ...], raw: dict) -> tuple[dict, list[str]]:
    """Check raw settings against the schema: (clean state, messages for the reader).

    Missing settings take their default silently; unknown names are ignored (embedding sites may
    add their own query parameters). Nothing raises: bad values become defaults or are clamped.
    """
    state: dict = {}
    messages: list[str] = []
    for param in params:
        state[param.name], said = parse_value(param, raw.get(param.name))
        messages += said
    return state, messages


def plain(value: object) -> str:
    """A value as short URL text: 0.3 not 0.30000000000000004, 100 not 100.0."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def state_query(params: tuple[Param, ...], state: dict) -> str:
    """The URL query that reproduces ``state`` (settings at their default are left out)."""
    pairs = []
    for param in params:
        value = state[param.name]
        if value == param.default_value():
            continue
        if isinstance(value, list):
            value = ",".join(plain(v) for v in value)
        pairs.append((param.name, plain(value)))
    return urlencode(pairs, safe=",")
