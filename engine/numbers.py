"""The numbers a page states, matched to its ledger (``content/<slug>/numbers.toml``), and "show
sources of numbers": each ledger-backed number marked with its entry, and an appendix of them.

One matcher serves both the reader's marks and ``tests/documents/test_numbers.py`` (every number a
reader sees is in the ledger). It reads the page's article as a reader does: prose, lists,
captions, notes, glossary definitions and the numbers inside equations (MathML ``<mn>``), but not
code blocks (the snippet tests check those), headings, the table of contents, the citation block,
quotes, the Sources list (titles and ids of the works cited), widgets or popovers (which repeat
glossary definitions).

Exempt, by one narrow rule each: whole numbers 0 to 10 (ordinary counts: "five examples"),
years (four digits 1900-2099), digits that are part of a name (GPT-3, T5, B_j's subscript is
MathML and reaches here as its own token, so names are judged by a letter or letter-hyphen
just before the digits), and references (§4.1, Table 1, Figure 10, Appendix A, arXiv:…).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from flask import render_template
from markupsafe import Markup

from .content_records import Tip

SKIPPED_TAGS = {"pre", "code", "script", "style", "svg", "h1", "h2", "h3", "h4", "h5", "h6", "summary"}
SKIPPED_CLASSES = {"tips", "toc", "figure-skips", "widget-wrap", "venue", "citation", "section-tools", "back-links",
                   "paper-quote", "kicker", "authors", "sec-num", "paper-sources"}
VOID_TAGS = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "area", "col", "embed", "mspace"}
NUMBER = re.compile(r"(?P<sign>[−-])?(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
REFERENCE = re.compile(r"(§\s*|\b(?:Table|Tables|Figure|Figures|Fig\.|Section|Sections|Appendix|arXiv:?|Equation|Eq\.)\s*)$")
UNARY_MINUS = re.compile(r"(?:^|[=(,:≈<>]) ?[−-] ?$")  # "= − 0.3" in an equation: its sign is a token of its own
QUERY_VALUES = {"on": True, "off": False}  # a page's ?sources=on|off; absent is off
APPENDIX_SLOT = "<!--number-sources-->"  # where document.html wants the appendix, after the article


@dataclass(frozen=True)
class StatedNumber:
    """A number a reader reads on the page, where the page's HTML has it."""

    value: str  # as the ledger is compared: no sign, commas or percent sign
    spelled: str  # as the page writes it: its sign, digits and a percent sign right after
    context: str  # the words around it, for messages
    start: int  # offsets of its digits in the page's HTML
    end: int
    wrap: tuple[int, int] | None  # the <mn> holding it, when it is one of an equation's numbers


class ReaderText(HTMLParser):
    """The text of the page's article that a reader reads, whitespace collapsed, each character
    with the span of the page's HTML it comes from ((-1, -1) for the spaces between elements)."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=False)  # entities one by one, so offsets stay exact
        self.source = source
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.stack: list[tuple[str, bool, int]] = []  # per open element: tag, skipped?, start offset
        self.in_article = 0
        self.chars: list[str] = []
        self.spans: list[tuple[int, int]] = []
        self.mn_at: dict[int, tuple[int, int]] = {}  # text index of an <mn>'s character → the <mn>'s span

    def position(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def add(self, text: str, start: int, end: int | None = None) -> None:
        """Append ``text``, found at ``start`` in the source (an entity: the whole of start..end)."""
        for i, char in enumerate(text):
            span = (start + i, start + i + 1) if end is None else (start, end)
            if char.isspace():
                if self.chars and self.chars[-1] == " ":
                    continue
                char = " "
            self.chars.append(char)
            self.spans.append(span)

    def separate(self) -> None:
        self.add(" ", -1)
        self.spans[-1] = (-1, -1)

    def handle_starttag(self, tag, attrs):
        if tag in VOID_TAGS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        skipped = tag in SKIPPED_TAGS or bool(classes & SKIPPED_CLASSES) or any(s for _, s, _ in self.stack)
        self.stack.append((tag, skipped, self.position()))
        if tag == "article":
            self.in_article += 1
        if self.chars:
            self.separate()  # tokens in MathML (and blocks) are separate words

    def handle_endtag(self, tag):
        if tag in VOID_TAGS or not self.stack:
            return
        open_tag, skipped, start = self.stack.pop()
        if tag == "article":
            self.in_article -= 1
        if open_tag == "mn" and not skipped:
            element = (start, self.source.index(">", self.position()) + 1)
            index = len(self.chars) - 1
            while index >= 0 and self.spans[index][0] >= start:
                self.mn_at[index] = element
                index -= 1
        self.separate()

    def readable(self) -> bool:
        return bool(self.in_article) and not any(s for _, s, _ in self.stack)

    def handle_data(self, data):
        if self.readable():
            self.add(data, self.position())

    def handle_entityref(self, name):
        if self.readable():
            start = self.position()
            self.add(html.unescape(f"&{name};"), start, self.source.index(";", start) + 1)

    def handle_charref(self, name):
        if self.readable():
            start = self.position()
            self.add(html.unescape(f"&#{name};"), start, self.source.index(";", start) + 1)

    def text(self) -> str:
        return "".join(self.chars)


def normalise(value: str) -> str:
    return value.replace(",", "").replace("%", "").replace("−", "").replace("-", "").strip()


def stated_numbers(page_html: str) -> list[StatedNumber]:
    """Every number a reader reads on the page that the rules above do not exempt, in page order."""
    parser = ReaderText(page_html)
    parser.feed(page_html)
    parser.close()
    text = parser.text()
    found = []
    for match in NUMBER.finditer(text):
        digits = match.group("digits")
        before = text[max(0, match.start() - 14):match.start()]
        after = text[match.end():match.end() + 1]
        if re.search(r"[A-Za-z0-9_.]$", before) or re.search(r"[A-Za-z]-$", before):
            continue  # part of a name or a longer token (GPT-3, T5, 1.2.3)
        if after == "." and text[match.end() + 1:match.end() + 2].isdigit():
            continue  # a version-like run such as 1.2.3
        if REFERENCE.search(before):
            continue
        plain = digits.replace(",", "")
        if re.fullmatch(r"\d+", plain) and (
                int(plain) <= 10 or (len(plain) == 4 and 1900 <= int(plain) <= 2099 and "," not in digits)):
            continue
        first, last = match.start("digits"), match.end("digits") - 1
        sign = "-" if match.group("sign") or UNARY_MINUS.search(before) else ""
        found.append(StatedNumber(
            value=normalise(digits), spelled=sign + digits + ("%" if after == "%" else ""),
            context=text[max(0, match.start() - 40):match.end() + 30],
            start=parser.spans[first][0], end=parser.spans[last][1],
            wrap=parser.mn_at.get(first) if parser.mn_at.get(first) == parser.mn_at.get(last) else None,
        ))
    return found


# -- the ledger's entries, and the one a stated number reads ---------------------------------------
@dataclass(frozen=True)
class LedgerEntry:
    number: int  # its place in the appendix, from 1: cited entries first, then computed, as the file lists them
    value: str
    source: str = ""  # a cited number's primary source and location
    expr: str = ""  # a computed number's expression (``from explainers import *``)

    @property
    def kind(self) -> str:
        return "computed" if self.expr else "cited"

    @property
    def unchecked(self) -> bool:
        """Known only from a secondary review, not found in the primary source (the ledger says "review only")."""
        return "review only" in self.source


ARXIV_ID = re.compile(r"arXiv:? ?(\d{4}\.\d{4,5})")
PLACE_IN_OWN_WORK = ("§", "Table", "Figure", "Appendix", "Abstract")


def works_named(meta: dict) -> dict[str, str]:
    """The works a document's ledger cites by arXiv id, by the names a reader knows them by
    ("Author et al. (year)"), from its Sources list; "" names the document's own paper."""
    works = {"": f"{meta['cite_as']} ({meta['year']})", meta["arxiv"]: f"{meta['cite_as']} ({meta['year']})"}
    for source in meta.get("sources", []):
        named = re.match(r"(.+?\(\d{4}\))\. .*arXiv:(\d{4}\.\d{4,5})", source.get("title", ""))
        if named:
            works.setdefault(named[2], named[1])
    return works


def source_place(entry: LedgerEntry, works: dict[str, str]) -> str:
    """Where a number comes from, in the few words of its popover's title: the work and the place in
    it ("Wang et al. (2024), Table 2"), the data files, an illustration or this site's computation;
    the entry itself (the popover's text, the appendix) gives the whole source."""
    if entry.kind == "computed":
        return "computed on this site (explainers)"
    source = entry.source
    while re.search(r"\([^()]*\)", source):  # asides, innermost first: the work and place are outside them
        source = re.sub(r"\s*\([^()]*\)", "", source)
    head = source.split(";")[0].split(": ")[0].strip()
    if head.startswith("data"):
        return "counted in the released data files"
    if head.startswith("illustrative"):
        return "an illustration, not a measurement"
    if head.startswith("review only"):
        return "a secondary review of the paper (unchecked)"
    named = ARXIV_ID.sub(lambda m: works.get(m[1], m[0]), head).removeprefix("https://")
    named = re.sub(r"(\(\d{4}\)) (?=[§A-Z])", r"\1, ", named)  # "Gema et al. (2024), Abstract"
    named = re.sub(r"@([0-9a-f]{7})[0-9a-f]{33}", r"@\1", named)  # a commit by its short id
    if named == head and head.startswith(PLACE_IN_OWN_WORK):
        named = f"{works['']}, {head}"
    return named + (" (unchecked: only a secondary review gives it)" if entry.unchecked else "")


def ledger_entries(ledger: dict) -> list[LedgerEntry]:
    entries = [*ledger.get("cited", []), *ledger.get("computed", [])]
    return [LedgerEntry(number, entry["value"], entry.get("source", ""), entry.get("expr", ""))
            for number, entry in enumerate(entries, 1)]


def ledger_values(ledger: dict) -> set[str]:
    return {normalise(entry.value) for entry in ledger_entries(ledger)}


def entries_for(stated: StatedNumber, entries: list[LedgerEntry]) -> list[LedgerEntry]:
    """The ledger entries that back a stated number: those spelled as the page spells it (sign, commas,
    percent sign), else those equal with the sign, else those equal as digits; several only when the
    ledger lists the same number twice (57 subjects, 57% of questions). Empty: not in the ledger."""
    def plain(value: str) -> str:
        return value.replace("−", "-").replace(",", "").replace("%", "").strip()

    for same in (lambda e: e.value.replace("−", "-").strip() == stated.spelled,
                 lambda e: plain(e.value) == plain(stated.spelled),
                 lambda e: normalise(e.value) == stated.value):
        found = [entry for entry in entries if same(entry)]
        if found:
            return found
    return []


# -- marking a page --------------------------------------------------------------------------------
@dataclass(frozen=True)
class NumberSources:
    """A page with its ledger-backed numbers marked, and what the appendix lists."""

    html: str
    appendix: list[LedgerEntry]  # each entry a mark opens, in ledger order
    tips: list[Tip]  # the popovers the marks open


def tip_id(entries: list[LedgerEntry]) -> str:
    return "tip-number-" + "-".join(str(entry.number) for entry in entries)


def mark_numbers(page_html: str, ledger: dict, works: dict[str, str]) -> NumberSources:
    """Wrap every number the ledger backs in a mark that opens its entry (popovers.js): a link to the
    entry in the appendix in prose, a focusable ``<mrow>`` round an equation's ``<mn>``. A number only
    a secondary review gives is marked unchecked as well. ``works``: works_named's."""
    entries = ledger_entries(ledger)
    edits: list[tuple[int, int, str, str]] = []
    tips: dict[str, Tip] = {}
    for stated in stated_numbers(page_html):
        backing = entries_for(stated, entries)
        if not backing:
            continue
        tip = tip_id(backing)
        tips.setdefault(tip, Tip(
            tip, Markup("{0}: {1}").format(backing[0].value, " and ".join(source_place(e, works) for e in backing)),
            Markup("").join(entry_text(entry) for entry in backing), f"#number-{backing[0].number}",
            more=f"Entry {backing[0].number} in Sources of numbers"))
        unchecked = " number-unchecked" if all(entry.unchecked for entry in backing) else ""
        attrs = f'class="number-mark{unchecked}" data-tip="{tip}" aria-describedby="{tip}-text" data-entry="{backing[0].number}"'
        if stated.wrap:  # MathML holds no <a>: the <mn> goes in a focusable row, as a symbol does
            name = html.escape(stated.spelled.removesuffix("%"))
            edits.append((*stated.wrap, f'<mrow {attrs} tabindex="0" aria-label="{name}">', "</mrow>"))
        else:
            edits.append((stated.start, stated.end, f'<a href="#number-{backing[0].number}" {attrs}>', "</a>"))
    parts, last = [], 0
    for start, end, opening, closing in edits:
        parts += [page_html[last:start], opening, page_html[start:end], closing]
        last = end
    parts.append(page_html[last:])
    used = {int(number) for tip in tips for number in tip.removeprefix("tip-number-").split("-")}
    return NumberSources("".join(parts), [entry for entry in entries if entry.number in used], list(tips.values()))


def with_number_sources(page_html: str, ledger: dict, works: dict[str, str]) -> str:
    """A document page with "show sources of numbers" on: its numbers marked, and after its article
    the appendix (printed at the end of the page) and the marks' popovers."""
    marked = mark_numbers(page_html, ledger, works)
    appendix = render_template("_number_sources.html", entries=marked.appendix, tips=marked.tips, entry_text=entry_text)
    return marked.html.replace(APPENDIX_SLOT, appendix, 1)


def entry_text(entry: LedgerEntry) -> Markup:
    """What a mark's popover and the appendix say of an entry."""
    if entry.kind == "computed":
        return Markup('<p><strong>Computed:</strong> <code class="number-expr">{0}</code> = {1}</p>').format(
            entry.expr, entry.value)
    return Markup("<p><strong>Source:</strong> {0}</p>").format(entry.source)
