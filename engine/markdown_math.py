"""The content format's math: ``$$ … $$`` display equations and ``\\( … \\)`` inline math, as MathML.

Part of the annotation extension (markdown_ext.py registers these): the LaTeX goes to MathML
through the page's references (``PageRefs.math``), which make its ``\\g{symbol-id}{…}`` symbols
focusable and record where each is used.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import markdown
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor

from .content_records import ContentError

if TYPE_CHECKING:
    from .markdown_ext import PageRefs


class DisplayMathPreprocessor(Preprocessor):
    """``$$ … $$`` on lines of their own becomes a numbered, captioned MathML block."""

    def __init__(self, md: markdown.Markdown, refs: PageRefs):
        super().__init__(md)
        self.refs = refs

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        collecting: list[str] | None = None
        for line in lines:
            stripped = line.strip()
            if collecting is None and stripped.startswith("$$"):
                collecting = []
                stripped = stripped[2:]
                if stripped.endswith("$$"):
                    out.extend(self._block(stripped[:-2]))
                    collecting = None
                else:
                    collecting.append(stripped)
            elif collecting is not None:
                if stripped.endswith("$$"):
                    collecting.append(stripped[:-2])
                    out.extend(self._block(" ".join(collecting)))
                    collecting = None
                else:
                    collecting.append(stripped)
            else:
                out.append(line)
        if collecting is not None:
            raise ContentError(f"section {self.refs.section_id!r}: a $$ equation is never closed")
        return out

    def _block(self, latex: str) -> list[str]:
        refs = self.refs
        before = {key: len(value) for key, value in refs.symbol_uses.items()}
        mathml = refs.math(latex.strip(), display=True)
        refs.equation_count += 1
        used = [key for key, value in refs.symbol_uses.items() if len(value) > before.get(key, 0)]
        html = f'<div class="equation" id="eq-{refs.equation_count}">{mathml}{self._symbol_key(used)}</div>'
        return ["", self.md.htmlStash.store(html), ""]

    def _symbol_key(self, symbol_ids: list[str]) -> str:
        """A collapsed list of the equation's symbols: their meaning without JavaScript or a mouse."""
        if not symbol_ids:
            return ""
        items = "".join(
            f'<dt>{self.refs.symbol_label(s)}</dt>'
            f'<dd>{self.refs.definition(self.refs.glossary.symbols[s]["short"])} '
            f'<a href="{self.refs.glossary_url}#symbol-{s}">Glossary entry</a></dd>'
            for s in symbol_ids
        )
        return (f'<details class="symbol-key"><summary>What the symbols mean</summary>'
                f'<dl>{items}</dl></details>')


class InlineMathProcessor(InlineProcessor):
    """``\\( … \\)`` inside a paragraph becomes inline MathML."""

    def __init__(self, md: markdown.Markdown, refs: PageRefs):
        super().__init__(r"\\\((?P<latex>.+?)\\\)", md)
        self.refs = refs

    def handleMatch(self, m: re.Match, data: str):
        # A worked line such as "a = b = c" becomes one formula per step, so a narrow screen breaks
        # the line between steps instead of hiding the answer in a sideways scroller; each wrapper
        # still scrolls if one step alone is wider than the screen.
        steps = [self.refs.math(step, display=False) for step in relation_steps(m.group("latex").strip())]
        # <wbr>: a line may break between steps, with no space added beside the relation's own.
        html = "<wbr>".join(f'<span class="math-inline">{mathml}</span>' for mathml in steps)
        return self.md.htmlStash.store(html), m.start(0), m.end(0)


_RELATION = re.compile(r"=|<|>|\\(?:approx|le|ge|leq|geq|ne|neq)(?![A-Za-z])")


def relation_steps(latex: str) -> list[str]:
    """``latex`` cut before each relation (=, ≈, <, ≤ …) that is not inside braces or \\left…\\right."""
    steps, start, depth, position = [], 0, 0, 0
    while position < len(latex):
        char = latex[position]
        if char == "\\" and latex.startswith(("\\left", "\\right"), position):
            depth += 1 if latex.startswith("\\left", position) else -1
            position += 5 if latex.startswith("\\left", position) else 6
            continue
        if char == "\\" and position + 1 < len(latex) and latex[position + 1] in "{}":
            position += 2  # an escaped brace is a symbol, not a group
            continue
        if char in "{}":
            depth += 1 if char == "{" else -1
        elif depth == 0 and position > start and (match := _RELATION.match(latex, position)):
            steps.append(latex[start:position].strip())
            start = position
            position = match.end()
            continue
        position += 1
    steps.append(latex[start:].strip())
    return [step for step in steps if step]
