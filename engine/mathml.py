"""A small LaTeX-to-MathML converter for the equations on annotated pages.

It covers the subset the content uses (fractions, roots, scripts, sums, accents, fences, text,
Greek letters, common relations and operators) and one extension of our own,
``\\g{symbol-id}{LaTeX}``, which marks a symbol that explains itself: the converter hands the
symbol's MathML to a caller-supplied function that wraps it (pages make it focusable and attach
its glossary explanation). Anything outside the subset raises :class:`MathSyntaxError` naming
what to fix, so a typo in the content fails the build instead of rendering as garbage.

We write our own converter instead of using a general one because the ``\\g`` wrapper has to
survive conversion as a real element around exactly the symbol's MathML.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from html import escape

SymbolWrapper = Callable[[str, str], str]


class MathSyntaxError(ValueError):
    """The LaTeX uses something the converter does not understand."""


_TOKEN = re.compile(
    r"(?P<command>\\[A-Za-z]+\*?|\\.)"
    r"|(?P<number>[0-9]+(?:\.[0-9]+)?)"
    r"|(?P<space>\s+)"
    r"|(?P<char>.)",
    re.S,
)

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ",
    "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "ell": "ℓ",
    "infty": "∞", "partial": "∂",
}
UPRIGHT_GREEK = {
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
OPERATORS = {
    "times": "×", "cdot": "⋅", "pm": "±", "mp": "∓", "div": "÷", "approx": "≈", "sim": "∼",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "equiv": "≡",
    "propto": "∝", "in": "∈", "notin": "∉", "to": "→", "rightarrow": "→", "leftarrow": "←",
    "Rightarrow": "⇒", "mid": "∣", "ldots": "…", "dots": "…", "cdots": "⋯", "cup": "∪",
    "cap": "∩", "subset": "⊂", "subseteq": "⊆", "forall": "∀", "exists": "∃", "neg": "¬",
    "land": "∧", "lor": "∨", "ast": "∗", "prime": "′", "%": "%", "#": "#", "&": "&", "_": "_",
}
# Delimiters, usable bare or after \left / \right.
DELIMITERS = {
    "(": "(", ")": ")", "[": "[", "]": "]", "|": "|", "\\lvert": "|", "\\rvert": "|",
    "\\vert": "|", "\\|": "‖", "\\lVert": "‖", "\\rVert": "‖", "\\{": "{", "\\}": "}",
    "\\lbrace": "{", "\\rbrace": "}", "\\langle": "⟨", "\\rangle": "⟩", ".": "",
}
BIG_OPERATORS = {"sum": "∑", "prod": "∏", "int": "∫"}
# Named functions set upright; those in LIMIT_FUNCTIONS take their subscript underneath in display
# math (a big operator's <mo> moves its limits aside by itself when inline; an <mi> cannot).
FUNCTIONS = {"log", "ln", "exp", "sin", "cos", "tan", "max", "min", "sup", "inf", "lim", "arg", "det", "Pr"}
LIMIT_FUNCTIONS = {"max", "min", "sup", "inf", "lim", "Pr"}
ACCENTS = {"hat": "^", "widehat": "^", "bar": "¯", "overline": "¯", "tilde": "~", "vec": "→", "dot": "˙"}
SPACES = {"\\,": "0.1667em", "\\:": "0.2222em", "\\>": "0.2222em", "\\;": "0.2778em",
          "\\ ": "0.25em", "\\quad": "1em", "\\qquad": "2em"}
THIN_SPACE = '<mspace width="0.1667em"></mspace>'
FRACTIONS = {"frac", "dfrac", "tfrac"}
TEXT_STYLES = {"mathrm": "normal", "mathbf": "bold", "mathit": "italic"}


class _Node(str):
    """One converted element, remembering whether scripts on it go under/over (limits)."""

    limits: bool = False
    function: bool = False  # a named function (max, log, \\operatorname): a thin space follows it

    @classmethod
    def make(cls, markup: str, limits: bool = False, function: bool = False) -> _Node:
        node = cls(markup)
        node.limits, node.function = limits, function
        return node


class _Parser:
    def __init__(self, latex: str, display: bool, wrap_symbol: SymbolWrapper | None):
        self.latex = latex
        self.display = display
        matches = [m for m in _TOKEN.finditer(latex) if m.lastgroup != "space"]
        self.tokens = [(m.lastgroup, m.group()) for m in matches]
        self.starts = [m.start() for m in matches]
        self.pos = 0
        self.wrap_symbol = wrap_symbol

    # -- token access ----------------------------------------------------------------------
    def fail(self, message: str) -> MathSyntaxError:
        return MathSyntaxError(f"{message} in equation: {self.latex!r}")

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise self.fail("unexpected end (a missing '}' or argument?)")
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, text: str) -> None:
        kind, value = self.take()
        if value != text:
            raise self.fail(f"expected {text!r} but found {value!r}")

    def raw_group(self) -> str:
        """The literal source of a braced argument (for \\text, \\operatorname, \\g ids)."""
        if self.peek() != "{":
            raise self.fail("expected '{'")
        start = self.starts[self.pos] + 1
        depth, index = 1, start
        while depth:
            if index >= len(self.latex):
                raise self.fail("unexpected end (a missing '}'?)")
            char = self.latex[index]
            if char == "\\":
                index += 2
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            index += 1
        while self.pos < len(self.tokens) and self.starts[self.pos] < index:
            self.pos += 1
        return self.latex[start:index - 1]

    # -- grammar -----------------------------------------------------------------------------
    def sequence(self, stop: set[str]) -> list[str]:
        items: list[str] = []
        while self.peek() is not None and self.peek() not in stop:
            atom = self.atom()
            if atom is not None:
                items.append(self.scripts(atom))
                if getattr(atom, "function", False) and self.peek() not in (None, "(", "\\left"):
                    items.append(THIN_SPACE)  # TeX's gap after max, log
        return items

    def group(self) -> str:
        """A braced group or a single atom, as one element (an argument or a script)."""
        if self.peek() == "{":
            self.take()
            items = self.sequence({"}"})
            self.expect("}")
            return _row(items)
        kind, value = self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)
        if kind == "number" and len(value) > 1:
            # TeX takes one digit as an unbraced argument (x^12 is x^1 then 2); keep TeX's rule.
            self.tokens[self.pos] = ("number", value[1:])
            self.starts[self.pos] += 1
            return f"<mn>{value[0]}</mn>"
        atom = self.atom()
        if atom is None:
            raise self.fail("missing argument")
        return atom

    def scripts(self, base: str) -> str:
        sub = sup = None
        while self.peek() in ("_", "^"):
            marker = self.take()[1]
            if marker == "_":
                if sub is not None:
                    raise self.fail("double subscript")
                sub = self.group()
            else:
                if sup is not None:
                    raise self.fail("double superscript")
                sup = self.group()
        if sub is None and sup is None:
            return base
        limits = getattr(base, "limits", False)
        if sub is not None and sup is not None:
            tag = "munderover" if limits else "msubsup"
            return f"<{tag}>{base}{sub}{sup}</{tag}>"
        if sub is not None:
            tag = "munder" if limits else "msub"
            return f"<{tag}>{base}{sub}</{tag}>"
        tag = "mover" if limits else "msup"
        return f"<{tag}>{base}{sup}</{tag}>"

    def atom(self) -> str | None:
        kind, value = self.take()
        if kind == "number":
            return f"<mn>{value}</mn>"
        if kind == "char":
            return self.character(value)
        return self.command(value)

    def character(self, char: str) -> str:
        if char.isalpha():
            return f"<mi>{escape(char)}</mi>"
        if char == "{":
            items = self.sequence({"}"})
            self.expect("}")
            return _row(items)
        if char in ("}", "^", "_"):
            raise self.fail(f"unexpected {char!r}")
        if char in "()[]|":
            return f'<mo stretchy="false">{escape(char)}</mo>'
        symbol = {"-": "−", "*": "∗", "'": "′"}.get(char, char)
        return f"<mo>{escape(symbol)}</mo>"

    def command(self, command: str) -> str | None:
        if command == "\\!":
            return None  # a negative thin space: dropping it changes nothing a reader notices
        symbol = self.symbol_command(command)
        return symbol if symbol is not None else self.structure_command(command)

    def symbol_command(self, command: str):
        """A command that stands for one token (a letter, an operator, a space), or None."""
        name = command[1:]
        if command in SPACES:
            return f'<mspace width="{SPACES[command]}"></mspace>'
        if name in GREEK:
            return f"<mi>{GREEK[name]}</mi>"
        if name in UPRIGHT_GREEK:
            return f'<mi mathvariant="normal">{UPRIGHT_GREEK[name]}</mi>'
        if command in ("\\lvert", "\\rvert", "\\vert", "\\{", "\\}", "\\lbrace", "\\rbrace",
                       "\\langle", "\\rangle", "\\|", "\\lVert", "\\rVert"):
            return f'<mo stretchy="false">{escape(DELIMITERS[command])}</mo>'
        if name in OPERATORS:
            return f"<mo>{escape(OPERATORS[name])}</mo>"
        if name in BIG_OPERATORS:
            markup = f"<mo>{BIG_OPERATORS[name]}</mo>"
            return markup if name == "int" else _Node.make(markup, limits=True)
        if name in FUNCTIONS:
            markup = f"<mi>{name}</mi>" if len(name) > 1 else f'<mi mathvariant="normal">{name}</mi>'
            return _Node.make(markup, limits=name in LIMIT_FUNCTIONS and self.display, function=True)
        return None

    def structure_command(self, command: str) -> str:
        """A command that reads its arguments (fractions, roots, accents, text, fences, symbols)."""
        name = command[1:]
        if name in FRACTIONS:
            numerator = self.group()
            denominator = self.group()
            return f"<mfrac>{numerator}{denominator}</mfrac>"
        if name == "sqrt":
            return self.root()
        if name in ACCENTS:
            return f'<mover accent="true">{self.group()}<mo>{escape(ACCENTS[name])}</mo></mover>'
        if name in TEXT_STYLES:
            return self.styled_text(TEXT_STYLES[name])
        if name == "text":
            text = self.raw_group()
            return f"<mtext>{escape(_keep_edge_spaces(text))}</mtext>"
        if name in ("operatorname", "operatorname*"):
            text = self.raw_group().replace("\\,", "\u2009")
            markup = f"<mi>{escape(text)}</mi>" if len(text) > 1 else f'<mi mathvariant="normal">{escape(text)}</mi>'
            return _Node.make(markup, limits=name.endswith("*") and self.display, function=True)
        if name == "left":
            return self.fenced()
        if name == "right":
            raise self.fail("\\right without a matching \\left")
        if name == "g":
            return self.explained_symbol()
        raise self.fail(f"unsupported command {command}")

    def root(self) -> str:
        """\\sqrt{x} or \\sqrt[n]{x}."""
        if self.peek() == "[":
            self.take()
            index = _row(self.sequence({"]"}))
            self.expect("]")
            return f"<mroot>{self.group()}{index}</mroot>"
        return f"<msqrt>{self.group()}</msqrt>"

    def styled_text(self, variant: str) -> str:
        """\\mathrm{SE}, \\mathbf{1}: plain letters and digits become one upright (or bold) token."""
        start = self.pos
        text = self.raw_group()
        if re.fullmatch(r"[A-Za-z0-9 ]+", text):
            token = "mn" if text.strip().isdigit() else "mi"
            text = text.strip()
            if token == "mi" and len(text) > 1 and variant == "normal":
                return f"<mi>{escape(text)}</mi>"  # a multi-letter mi is upright already
            return f'<{token} mathvariant="{variant}">{escape(text)}</{token}>'
        self.pos = start
        return self.group()  # anything richer keeps its own structure

    def fenced(self) -> str:
        opening = self.delimiter()
        items = self.sequence({"\\right"})
        if self.peek() != "\\right":
            raise self.fail("\\left without a matching \\right")
        self.take()
        closing = self.delimiter()
        open_mo = f'<mo fence="true" stretchy="true" form="prefix">{escape(opening)}</mo>' if opening else ""
        close_mo = f'<mo fence="true" stretchy="true" form="postfix">{escape(closing)}</mo>' if closing else ""
        return f"<mrow>{open_mo}{_row(items, always=True)}{close_mo}</mrow>"

    def delimiter(self) -> str:
        kind, value = self.take()
        if value not in DELIMITERS:
            raise self.fail(f"{value!r} cannot follow \\left or \\right")
        return DELIMITERS[value]

    def explained_symbol(self) -> str:
        symbol_id = self.raw_group().strip()
        if not re.fullmatch(r"[A-Za-z0-9_-]+", symbol_id):
            raise self.fail(f"bad symbol id {symbol_id!r} in \\g{{…}}")
        body = self.group()
        if self.wrap_symbol is None:
            return body
        return self.wrap_symbol(symbol_id, body)


def _row(items: list[str], always: bool = False) -> str:
    if len(items) == 1 and not always:
        return items[0]
    return "<mrow>" + "".join(items) + "</mrow>"


def _keep_edge_spaces(text: str) -> str:
    # HTML collapses the spaces around \text{ if }; non-breaking ones keep the gap TeX shows.
    stripped = text.strip(" ")
    lead = len(text) - len(text.lstrip(" "))
    trail = len(text) - len(text.rstrip(" "))
    return "\u00a0" * lead + stripped + "\u00a0" * trail


def to_mathml(latex: str, display: bool = False, wrap_symbol: SymbolWrapper | None = None) -> str:
    """Convert ``latex`` to a ``<math>`` element; ``wrap_symbol(id, mathml)`` handles ``\\g``."""
    parser = _Parser(latex, display, wrap_symbol)
    items = parser.sequence(set())
    if parser.peek() is not None:
        raise parser.fail(f"unexpected {parser.peek()!r}")
    mode = ' display="block"' if display else ""
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML"{mode}>{_row(items, always=True)}</math>'
