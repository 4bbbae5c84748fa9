"""The shape of a rendered section: step labels, margin notes, ladder headings, and what folds on a phone.

Part of the annotation extension (markdown_ext.py registers these tree processors after the
inline ones, so they see each paragraph's final text).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from typing import TYPE_CHECKING

import markdown
from markdown import util
from markdown.treeprocessors import Treeprocessor

if TYPE_CHECKING:
    from .markdown_ext import PageRefs


# -- paragraph steps, margin notes and ladder headings ----------------------------------------
# Paragraph openings that mark a step of the ladder; the label keeps any "(illustrative)".
STEP_LABEL = re.compile(r"^(?P<label>In words:|With the numbers[^:]{0,40}:|Reading it:|Try it:)")
STEP_CLASSES = {"In words": "in-words", "With the numbers": "with-numbers", "Reading it": "reading-it",
                "Try it": "try-it"}
LADDER_RUNGS = ("Everyday picture", "Tiny example", "Diagram", "Reading it", "The math",
                "In Python", "Why it matters")


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class StepTreeprocessor(Treeprocessor):
    """Label step paragraphs, turn ``Note:`` into margin notes, mark ladder headings."""

    def __init__(self, md: markdown.Markdown, refs: PageRefs):
        super().__init__(md)
        self.refs = refs

    def run(self, root: etree.Element) -> None:
        for element in root.iter():
            if element.tag == "p" and element.text:
                self._paragraph(element)
            elif element.tag == "h3":
                self._heading(element)

    def _paragraph(self, p: etree.Element) -> None:
        text = p.text
        if text.startswith("Note:"):
            p.tag = "aside"
            p.set("class", "margin-note")
            p.set("role", "note")
            self._label(p, "Note:")
            return
        match = STEP_LABEL.match(text)
        if match:
            label = match.group("label")
            css = next(css for opening, css in STEP_CLASSES.items() if label.startswith(opening))
            p.set("class", f"step {css}")
            self._label(p, label)

    @staticmethod
    def _label(p: etree.Element, label: str) -> None:
        span = etree.Element("span", {"class": "step-label"})
        span.text = label
        span.tail = p.text[len(label):]
        p.text = ""
        p.insert(0, span)

    def _heading(self, h3: etree.Element) -> None:
        title = "".join(h3.itertext())
        h3.set("id", self.refs.unique_id(f"{self.refs.section_id}--{slugify(title)}"))
        for rung in LADDER_RUNGS:
            if title.startswith(rung):
                h3.set("class", f"rung rung-{slugify(rung)}")


# -- what a first reading can skip, folded on a phone -------------------------------------------
class PhoneFoldTreeprocessor(Treeprocessor):
    """What a first reading can skip folds on a phone: each "The math" rung (everything under its
    heading up to the next heading, widgets and diagrams excepted); elsewhere, each run of equations,
    their "In words" and "With the numbers" and Python snippets (a run with an equation or a snippet
    in it); and, one by one, each "Reading it" and "Try it" paragraph (the guide to a figure) and each
    note. A heading stays outside its fold, so a screen reader still finds it.

    A fold is a ``<details class="phone-fold" data-fold-narrow>``, closed in the HTML, so a phone
    shows it folded with or without JavaScript and nothing moves once the page has drawn; on a wider
    screen site.css shows what it holds and hides its summary, and print.css prints it open. A link
    into a fold opens it (site.js)."""

    # Folded one by one, each under these words: the guide to a figure, what to try with it, a note.
    ASIDES = {"reading-it": "How to read the figure", "try-it": "What to try with the figure", "note": "A note"}

    def _kind(self, element: etree.Element) -> str:
        """'equation', 'snippet', 'in-words', 'with-numbers', 'reading-it', 'try-it', 'note', 'figure'
        (a widget or a diagram) or ''."""
        css = element.get("class", "")
        if element.tag == "figure" or "widget-wrap" in css:
            return "figure"
        if element.tag == "p" and "step" in css.split():
            return next((kind for kind in ("in-words", "with-numbers", "reading-it", "try-it") if kind in css.split()), "")
        if element.tag == "aside" and "margin-note" in css:
            return "note"
        stashed = util.HTML_PLACEHOLDER_RE.fullmatch((element.text or "").strip())
        if element.tag == "p" and len(element) == 0 and stashed:  # a block of raw HTML, put in after
            raw = self.md.htmlStash.rawHtmlBlocks[int(stashed[1])]
            for prefix, kind in (('<div class="equation"', "equation"), ('<div class="snippet', "snippet")):
                if str(raw).startswith(prefix):
                    return kind
        return ""

    @staticmethod
    def _summary(kinds: list[str]) -> str:
        """A fold's words, one short line on a phone: Python alone, or the math."""
        return "Show it in Python" if set(kinds) == {"snippet"} else "Show the math"

    @staticmethod
    def _fold(parent: etree.Element, at: int, elements: list[etree.Element], words: str) -> None:
        details = etree.Element("details", {"class": "phone-fold", "data-fold-narrow": ""})
        summary = etree.SubElement(details, "summary")
        summary.text = words
        for element in elements:
            parent.remove(element)
            details.append(element)
        parent.insert(at, details)

    def run(self, root: etree.Element) -> None:
        children = list(root)
        groups: list[tuple[list[etree.Element], str]] = []  # (elements, the fold's summary)
        run: list[etree.Element] = []
        in_rung = False

        def close_run() -> None:
            nonlocal run
            kinds = {self._kind(e) for e in run}
            if run and kinds & {"equation", "snippet"}:
                groups.append((run, self._summary([self._kind(e) for e in run])))
            run = []

        for child in children:
            if child.tag in ("h2", "h3"):
                close_run()
                in_rung = "rung-the-math" in child.get("class", "")
                continue
            kind = self._kind(child)
            if kind == "figure":
                close_run()
                continue
            if kind in self.ASIDES:
                close_run()
                groups.append(([child], self.ASIDES[kind]))
                continue
            if in_rung or kind in ("equation", "snippet", "in-words", "with-numbers"):
                run.append(child)
            else:
                close_run()
        close_run()
        for elements, words in groups:
            self._fold(root, list(root).index(elements[0]), elements, words)
