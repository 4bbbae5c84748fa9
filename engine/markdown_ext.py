"""Python-Markdown extensions for annotated pages.

One extension, :class:`AnnotationExtension`, adds everything the content format needs on top of
plain Markdown:

* ``[[term-id]]`` / ``[[term-id|shown text]]``: a glossary term, a link to its glossary entry that
  the page's script turns into a popover;
* ``$$ … $$`` (display) and ``\\( … \\)`` (inline): LaTeX rendered to MathML on the server, with
  ``\\g{symbol-id}{…}`` symbols made focusable and explained like glossary terms;
* fenced ``python`` blocks: shown with their ``# → result`` comments highlighted, and recorded so
  the test suite can run them;
* ``[[diagram name]]`` (an inline SVG figure, captioned by a following ``Figure:`` paragraph; with
  its layout for wide frames too where the document has ``diagrams/<name>.wide.svg``) and
  ``[[widget name]]`` (a widget slot: a marker that the page fills at request time, so what a
  widget shows, such as the live model's state, is never frozen into rendered content);
* paragraphs starting ``Note:`` (margin notes), ``In words:``, ``With the numbers``, ``Reading it:``
  and ``Try it:`` (styled steps), and ladder headings (``### Everyday picture`` …).

The math lives in markdown_math.py and the section's shape (steps, notes, ladder headings, phone
folds) in markdown_shape.py; this module registers them all. Everything a page uses is recorded in a
:class:`PageRefs` shared by all its sections: which
terms and symbols appear where (for popovers and glossary back-links) and which snippets it shows.
An unknown term, symbol, diagram or LaTeX command raises :class:`ContentError`.
"""
from __future__ import annotations

import html
import re
import xml.etree.ElementTree as etree
from dataclasses import dataclass, field
from pathlib import Path

import markdown
from markdown.blockprocessors import BlockProcessor
from markdown.extensions import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markupsafe import Markup, escape

from widgetkit.snippets import split_result  # noqa: F401 - one definition for the page, the tests and the editor

from .content_records import ContentError, Glossary, Snippet, Tip, Use
from .markdown_math import DisplayMathPreprocessor, InlineMathProcessor
from .markdown_shape import PhoneFoldTreeprocessor, StepTreeprocessor
from .mathml import MathSyntaxError, to_mathml


@dataclass
class PageRefs:
    """What one page's Markdown refers to, collected while its sections render.

    ``tracked`` pages (the document) record uses and make terms and symbols interactive;
    untracked text (a popover's own definition) renders terms as plain words, so popovers
    never nest.
    """

    glossary: Glossary
    glossary_url: str
    diagrams_dir: Path
    tracked: bool = True
    widgets: frozenset[str] = frozenset()  # the names [[widget name]] may use (the document's widget list)
    term_uses: dict[str, list[Use]] = field(default_factory=dict)
    symbol_uses: dict[str, list[Use]] = field(default_factory=dict)
    snippets: list[Snippet] = field(default_factory=list)
    section_id: str = ""
    section_title: str = ""
    equation_count: int = 0
    heading_ids: set[str] = field(default_factory=set)
    # Made on first use: building a converter costs more than converting a short definition, and a
    # page converts hundreds (its sections, glossary entries and popovers).
    _converter: markdown.Markdown | None = field(default=None, init=False, repr=False, compare=False)
    _plain: PageRefs | None = field(default=None, init=False, repr=False, compare=False)

    def unique_id(self, wanted: str) -> str:
        """``wanted``, or ``wanted-2``, ``-3``… if a heading on the page already has it."""
        candidate, n = wanted, 1
        while candidate in self.heading_ids:
            n += 1
            candidate = f"{wanted}-{n}"
        self.heading_ids.add(candidate)
        return candidate

    def start_section(self, section_id: str, section_title: str) -> None:
        self.section_id, self.section_title = section_id, section_title

    def _record(self, uses: dict[str, list[Use]], kind: str, item_id: str) -> str:
        anchor = f"use-{kind}-{item_id}-{len(uses.get(item_id, [])) + 1}"
        uses.setdefault(item_id, []).append(Use(anchor, self.section_id, self.section_title))
        return anchor

    def term_element(self, term_id: str, shown: str | None) -> etree.Element:
        entry = self.glossary.term(term_id)
        text = shown if shown is not None else entry["term"]
        if not self.tracked:
            span = etree.Element("span", {"class": "term-plain"})
            span.text = text
            return span
        anchor = self._record(self.term_uses, "term", term_id)
        link = etree.Element("a", {
            "class": "term", "id": anchor, "href": f"{self.glossary_url}#{term_id}",
            "data-tip": f"tip-term-{term_id}", "aria-describedby": f"tip-term-{term_id}-text",
        })
        link.text = text
        return link

    def symbol_markup(self, symbol_id: str, mathml: str) -> str:
        self.glossary.symbol(symbol_id)
        if not self.tracked:
            return mathml
        anchor = self._record(self.symbol_uses, "sym", symbol_id)
        # A focusable symbol needs a name of its own (what it shows, "ŷ"); its definition is the
        # description a screen reader reads after it.
        name = escape(html.unescape(re.sub(r"<[^>]+>", "", mathml)).strip())
        return (f'<mrow class="sym" id="{anchor}" tabindex="0" aria-label="{name}" '
                f'data-tip="tip-sym-{symbol_id}" aria-describedby="tip-sym-{symbol_id}-text">{mathml}</mrow>')

    def definition(self, text: str) -> Markup:
        """A definition's Markdown as HTML, its terms as plain words (no popovers inside popovers)."""
        if self._plain is None:
            self._plain = PageRefs(self.glossary, self.glossary_url, self.diagrams_dir, tracked=False)
        return render_inline(text, self._plain)

    def converter(self) -> markdown.Markdown:
        """The Markdown converter bound to this page's references, made once."""
        if self._converter is None:
            self._converter = markdown.Markdown(
                extensions=[AnnotationExtension(self), "fenced_code", "tables", "sane_lists", "smarty"],
                output_format="html",
            )
        return self._converter

    def tips(self) -> list[Tip]:
        """One popover per term and symbol this page uses, in order of first use."""
        tips = [
            Tip(f"tip-term-{term_id}", escape(self.glossary.terms[term_id]["term"]),
                self.definition(self.glossary.terms[term_id]["short"]), f"{self.glossary_url}#{term_id}")
            for term_id in self.term_uses
        ]
        tips += [
            Tip(f"tip-sym-{symbol_id}", Markup(self.symbol_label(symbol_id)),
                self.definition(self.glossary.symbols[symbol_id]["short"]),
                f"{self.glossary_url}#symbol-{symbol_id}")
            for symbol_id in self.symbol_uses
        ]
        return tips

    def symbol_label(self, symbol_id: str) -> str:
        """A symbol as MathML on its own: from LaTeX (``\\hat{y}``) or plain text (``SE``, ``p``)."""
        written = self.glossary.symbol(symbol_id)["symbol"]
        if re.search(r"[\\^_{]", written):
            return to_mathml(written)
        return f'<math xmlns="http://www.w3.org/1998/Math/MathML"><mi>{escape(written)}</mi></math>'

    def math(self, latex: str, display: bool) -> str:
        try:
            return to_mathml(latex, display=display, wrap_symbol=self.symbol_markup)
        except MathSyntaxError as error:
            raise ContentError(f"section {self.section_id!r}: {error}") from None


# -- Python snippets -------------------------------------------------------------------------
_PYTHON_FENCE = re.compile(r"^```[ ]*python(?P<info>(?:[ ][^\n]*)?)\n(?P<code>.*?)\n```[ ]*$", re.M | re.S)
_SERVER_ONLY = re.compile(r"^server:[ ]*(?P<reason>\S.*?)[ ]*$")


def _server_only(info: str, section_id: str) -> str:
    """The reason a fence's info string gives for running on the server only; "" for a plain ```python."""
    info = info.strip()
    if not info:
        return ""
    match = _SERVER_ONLY.match(info)
    if not match:
        raise ContentError(f"section {section_id!r}: a python snippet's fence is ```python or "
                           f"```python server: <why it cannot run in the browser>, not ```python {info}")
    return match.group("reason")


def _snippet_html(code: str, server_only: str = "") -> str:
    lines = []
    for line in code.split("\n"):
        if split_result(line):
            marker = line.rindex("# → ")
            lines.append(f'{escape(line[:marker])}<span class="snippet-result">{escape(line[marker:])}</span>')
        elif line.lstrip().startswith("#"):
            lines.append(f'<span class="snippet-comment">{escape(line)}</span>')
        else:
            lines.append(escape(line))
    body = "\n".join(lines)
    if server_only:  # site.js gives "Edit and run" to every snippet without data-runs="server"
        opening = (f'<div class="snippet" data-runs="server"><p class="snippet-label">Python '
                   f'<span class="snippet-where">Runs on the server: {escape(server_only)}</span></p>')
    else:
        opening = '<div class="snippet"><p class="snippet-label">Python</p>'
    return f'{opening}<pre tabindex="0"><code class="language-python">{body}</code></pre></div>'


class SnippetPreprocessor(Preprocessor):
    """Take fenced python blocks before Markdown sees them; record each one for the tests."""

    def __init__(self, md: markdown.Markdown, refs: PageRefs):
        super().__init__(md)
        self.refs = refs

    def run(self, lines: list[str]) -> list[str]:
        def replace(match: re.Match) -> str:
            code = match.group("code")
            server_only = _server_only(match.group("info"), self.refs.section_id)
            self.refs.snippets.append(Snippet(self.refs.section_id, code, server_only))
            return "\n\n" + self.md.htmlStash.store(_snippet_html(code, server_only)) + "\n\n"

        return _PYTHON_FENCE.sub(replace, "\n".join(lines)).split("\n")


# -- glossary terms --------------------------------------------------------------------------
class TermProcessor(InlineProcessor):
    """``[[term-id]]`` or ``[[term-id|shown text]]``."""

    def __init__(self, md: markdown.Markdown, refs: PageRefs):
        super().__init__(r"\[\[(?P<id>[A-Za-z0-9_-]+)(?:\|(?P<shown>[^\]|]+))?\]\]", md)
        self.refs = refs

    def handleMatch(self, m: re.Match, data: str):
        return self.refs.term_element(m.group("id"), m.group("shown")), m.start(0), m.end(0)


# -- diagrams and widgets --------------------------------------------------------------------
class EmbedProcessor(BlockProcessor):
    """``[[diagram name]]`` (with its ``Figure:`` caption) and ``[[widget name]]`` blocks."""

    PATTERN = re.compile(r"^\[\[(?P<kind>diagram|widget) (?P<name>[a-z0-9-]+)\]\]$")

    def __init__(self, parser, refs: PageRefs):
        super().__init__(parser)
        self.refs = refs

    def test(self, parent, block: str) -> bool:
        return bool(self.PATTERN.match(block.strip()))

    def run(self, parent, blocks: list[str]) -> None:
        match = self.PATTERN.match(blocks.pop(0).strip())
        kind, name = match.group("kind"), match.group("name")
        if kind == "widget":
            if name not in self.refs.widgets:
                raise ContentError(f"section {self.refs.section_id!r}: no widget {name!r} in the document's widget list "
                                   f"(paper.toml widgets = {sorted(self.refs.widgets)})")
            slot = etree.SubElement(parent, "div", {"class": "widget-wrap"})
            slot.text = self.parser.md.htmlStash.store(widget_slot(name))
            return
        figure = etree.SubElement(parent, "figure", {"class": "diagram", "id": f"fig-{name}"})
        art = etree.SubElement(figure, "div", {"class": "diagram-art"})
        art.text = self.parser.md.htmlStash.store(self._svg(name))
        if blocks and blocks[0].startswith("Figure:"):
            caption = etree.SubElement(figure, "figcaption")
            label = etree.SubElement(caption, "span", {"class": "step-label"})
            label.text = "Figure:"
            label.tail = blocks.pop(0)[len("Figure:"):]

    def _svg(self, name: str) -> str:
        """The diagram's SVG; with its layout for wide frames too where ``<name>.wide.svg`` exists
        (diagrams.css shows the one that fits the frame)."""
        path = self.refs.diagrams_dir / f"{name}.svg"
        if not path.is_file():
            raise ContentError(f"section {self.refs.section_id!r}: no diagram {path}")
        wide = path.with_name(f"{name}.wide.svg")
        if not wide.is_file():
            return self._checked_svg(path)
        return (self._checked_svg(path).replace("<svg", '<svg data-layout="narrow"', 1)
                + self._checked_svg(wide).replace("<svg", '<svg data-layout="wide"', 1))

    @staticmethod
    def _checked_svg(path: Path) -> str:
        svg = path.read_text(encoding="utf-8")
        svg = re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", svg)
        if "<title" not in svg:
            raise ContentError(f"diagram {path} needs a <title> (its text alternative)")
        if not re.search(r"<svg[^>]*\srole=", svg):
            svg = svg.replace("<svg", '<svg role="img"', 1)
        return svg


class AnnotationExtension(Extension):
    """Register every piece above, bound to one page's :class:`PageRefs`."""

    def __init__(self, refs: PageRefs):
        super().__init__()
        self.refs = refs

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        refs = self.refs
        # Snippets before fenced_code (25) claims them; display math after, so code stays code.
        md.preprocessors.register(SnippetPreprocessor(md, refs), "python_snippets", 27)
        md.preprocessors.register(DisplayMathPreprocessor(md, refs), "display_math", 24)
        # Inline math above backslash escapes (180) so \( \) and _ inside math stay LaTeX;
        # code spans (190) still win, so `\(` in backticks is shown literally.
        md.inlinePatterns.register(InlineMathProcessor(md, refs), "inline_math", 186)
        md.inlinePatterns.register(TermProcessor(md, refs), "glossary_term", 175)
        md.parser.blockprocessors.register(EmbedProcessor(md.parser, refs), "embeds", 75)
        # After inline processing (20), so labels see the final text.
        md.treeprocessors.register(StepTreeprocessor(md, refs), "steps", 15)
        md.treeprocessors.register(PhoneFoldTreeprocessor(md), "phone_folds", 14)


def render_markdown(text: str, refs: PageRefs) -> Markup:
    """Render one section's Markdown body to HTML, recording its uses in ``refs``."""
    md = refs.converter()
    md.reset()  # nothing of the last text converted (its stashed HTML, its link references) carries over
    return Markup(md.convert(text))


_SLOT = re.compile(r"<!--widget:(?P<name>[a-z0-9-]+)-->")


def widget_slot(name: str) -> str:
    """The marker a ``[[widget name]]`` line leaves in rendered HTML."""
    return f"<!--widget:{name}-->"


def widget_names(html: str) -> list[str]:
    """The widgets whose slots ``html`` holds, in the order they appear."""
    return [match.group("name") for match in _SLOT.finditer(str(html))]


def fill_widget_slots(html: str, render) -> Markup:
    """Replace every widget marker in ``html`` with ``render(name)`` (the widget's HTML now)."""
    return Markup(_SLOT.sub(lambda m: str(render(m.group("name"))), str(html)))


def render_inline(text: str, refs: PageRefs) -> Markup:
    """Render a one-paragraph definition without its <p> wrapper."""
    html = str(render_markdown(text, refs)).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return Markup(html)
