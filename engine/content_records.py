"""The records the content pipeline passes around: its error, the glossary, and what a page uses.

Plain data, shared by the Markdown extension (markdown_ext.py and its parts) and the page builder
(content.py), so that neither imports the other for them.
"""
from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup


class ContentError(ValueError):
    """Content that cannot be rendered: names the file or id to fix."""


@dataclass(frozen=True)
class Glossary:
    """The terms and equation symbols that explain themselves, by id."""

    terms: dict[str, dict]
    symbols: dict[str, dict]

    def term(self, term_id: str) -> dict:
        if term_id not in self.terms:
            raise ContentError(f"unknown glossary term [[{term_id}]]: add [terms.{term_id}] to glossary.toml")
        return self.terms[term_id]

    def symbol(self, symbol_id: str) -> dict:
        if symbol_id not in self.symbols:
            raise ContentError(f"unknown symbol \\g{{{symbol_id}}}: add [symbols.{symbol_id}] to glossary.toml")
        return self.symbols[symbol_id]


@dataclass(frozen=True)
class Use:
    """One place a term or symbol appears: the element id there, and its section."""

    anchor: str
    section_id: str
    section_title: str


@dataclass(frozen=True)
class Snippet:
    """A Python snippet exactly as shown on the page.

    ``server_only`` is empty for a snippet the reader can run in the page (Pyodide), else why it
    cannot (```` ```python server: it reads the dataset's files ````): the page then shows the code
    and that reason, without "Edit and run". The tests run every snippet either way.
    """

    section_id: str
    code: str
    server_only: str = ""


@dataclass(frozen=True)
class Tip:
    """A popover: the element id its triggers point at, a title, the definition, the entry's URL."""

    id: str
    title: str
    text: Markup
    href: str
    more: str = "Glossary entry"  # the words of the link to ``href``
