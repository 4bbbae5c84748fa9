"""A widget's settings: the schema (one :class:`Param` per control), checking, and the URL query.

A widget's state is its URL query. :func:`parse_state` checks raw values (query text, form values,
or what the browser sends) against the schema and never raises for a reader's input: a bad value
becomes the default or is clamped, with a message saying so. :func:`state_query` writes the query
that reproduces a state, leaving settings at their default out.

A percent setting (``Param(..., percent=True)``) holds a share (0.3) in its state, its query
(``?score=0.3``) and its views; the box a reader types in shows and takes percent (30, with "%"
beside it) and is sent under its own name, the setting's name plus ``_percent``
(``score_percent=30``: a form sent without JavaScript, or by the page's script). parse_state reads
either; where both are given the share (the canonical name) wins.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlencode

MAX_LIST_ITEMS = 200
MAX_RAW_CHARS = 4000
LOG_STEP = 0.05
PERCENT_SUFFIX = "_percent"  # a percent setting's box is sent as its name plus this, in percent


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
    percent: bool = False  # a share (0-1) that the reader's box shows and takes in percent
    help: str = ""
    # A percent setting's unit as the reader reads it: "%" for a share of questions, "points" for a
    # difference between two shares (a change of accuracy: 0.8 points, not 0.8 %).
    unit: str = "%"
    # "log" for a quantity spanning orders of magnitude: the slider moves along log10 of the value,
    # in steps of LOG_STEP (a power of ten is always a stop: 100 to 1,000 is 20 steps).
    scale: str = "linear"

    def as_dict(self) -> dict:
        return {
            "name": self.name, "label": self.label, "kind": self.kind, "default": self.default,
            "minimum": self.minimum, "maximum": self.maximum, "step": self.step,
            "choices": [list(c) for c in self.choices], "percent": self.percent,
            "percent_name": self.percent_name if self.percent else None, "help": self.help,
            "scale": self.scale, "unit": self.unit,
        }

    @property
    def percent_name(self) -> str:
        """The name a percent setting's box is sent under (its value in percent)."""
        return self.name + PERCENT_SUFFIX

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


def in_percent(share: float) -> str:
    """A share as the number a percent box shows: 0.3 → "30", 0.726 → "72.6", -0.008 → "-0.8"."""
    return f"{share * 100:.10g}"


def _parse_percent(param: Param, raw: str) -> tuple[object, list[str]]:
    """A percent box's text (30 for 0.3) as the share it stands for; messages speak in percent.
    The decimal point is moved exactly (Decimal), so typing 72.6 gives the same share as 0.726."""
    unit = "%" if param.unit == "%" else f" {param.unit}"
    default = f"{in_percent(param.default)}{unit}"
    try:
        typed = Decimal(raw)
        share = float(typed.scaleb(-2))
    except ArithmeticError:  # not a number, or a number too large to move
        return param.default, [f"{param.label}: “{shown(raw)}{unit}” is not a number; using {default}."]
    if not typed.is_finite():
        return param.default, [f"{param.label}: “{shown(raw)}{unit}” is not a finite number; using {default}."]
    low, high = param.minimum, param.maximum
    if share < low or share > high:
        clamped = min(max(share, low), high)
        return clamped, [f"{param.label} must be between {in_percent(low)}{unit} and {in_percent(high)}{unit}; "
                         f"{shown(raw)}{unit} was changed to {in_percent(clamped)}{unit}."]
    return share, []


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
    A percent setting is read from its name (a share) or, where that is missing or empty, from
    its box's name (``percent_name``, in percent).
    """
    state: dict = {}
    messages: list[str] = []
    for param in params:
        typed = raw.get(param.percent_name) if param.percent else None
        if raw.get(param.name) in (None, "") and typed not in (None, ""):
            state[param.name], said = _parse_percent(param, str(typed)[:MAX_RAW_CHARS].strip())
        else:
            state[param.name], said = parse_value(param, raw.get(param.name))
        messages += said
    return state, messages


def query_names(params: tuple[Param, ...]) -> tuple[str, ...]:
    """Every query parameter parse_state reads: the settings' names and their percent boxes'."""
    return tuple(name for param in params for name in (param.name, *([param.percent_name] if param.percent else [])))


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
