"""Document content: each document folder's Markdown and TOML files, rendered and kept.

Layout of one document (see docs/content.md)::

    content/<slug>/paper.toml              title, authors, year, venue, arxiv, summary, bibtex, …,
                                           [[sources]] (title, url, note): the works the page cites
    content/<slug>/sections/NN-slug.md     one section each, TOML front matter between --- lines
    content/<slug>/glossary.toml           [terms.<id>] and [symbols.<id>]
    content/<slug>/numbers.toml            the ledger of every number the prose states
    content/<slug>/diagrams/<n>.svg        figures included with [[diagram name]]

Rendering needs no Flask application or request: ``[[widget name]]`` leaves a slot that the page
fills when it is served. In production every document is rendered when the app starts, so a content
error stops the start instead of reaching a reader; with CONTENT_RELOAD on (authors), a document is
rendered on request and again after any of its files changes.
"""
from __future__ import annotations

import hashlib
import html
import re
import threading
import tomllib
from dataclasses import dataclass, field
from dataclasses import replace as replace_fields
from pathlib import Path

from flask import Flask, current_app
from markupsafe import Markup

from .content_records import ContentError, Glossary, Tip, Use
from .documents import KINDS, Document, read_toml
from .markdown_ext import PageRefs, render_markdown, widget_names

SECTION_FILE = re.compile(r"^(?P<order>\d\d)-(?P<slug>[a-z0-9-]+)\.md$")
SECTION_KEYS = {"id", "title", "number", "quote", "quote_source", "quote_link", "quote_by"}
DOCUMENT_KEYS = {"title", "short_title", "cite_as", "credit", "authors", "year", "venue", "arxiv", "summary", "bibtex"}


@dataclass(frozen=True)
class Section:
    """One rendered section of a document."""

    id: str
    title: str
    number: str
    quote: str
    quote_source: str
    quote_link: str
    html: Markup
    source: Path
    quote_by: str = ""  # who wrote the quote, when not the document's cite_as (year)
    quote_cite: int = 0  # the number of the quote's source in the Sources list (0: none)

    @property
    def widgets(self) -> list[str]:
        """The names of the widgets the section shows, in order (the page links to each from the
        section's start, so a keyboard reader can skip the terms and citations before it)."""
        return widget_names(self.html)


@dataclass(frozen=True)
class RenderedDocument:
    """A document, fully rendered: its metadata, sections and what they refer to."""

    slug: str
    meta: dict
    sections: list[Section]
    refs: PageRefs
    tips: list[Tip]
    # The glossary as the document's own "glossary" section lists it (definitions without popovers).
    glossary_terms: list[Entry]
    glossary_symbols: list[Entry]

    # Where the prose cites each source: number → [(anchor id, section number, section title)].
    citations: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)

    @property
    def sources(self) -> list[dict]:
        """The works the page cites (paper.toml ``[[sources]]``), listed at the end of the page."""
        return self.meta.get("sources", [])

    @property
    def kind(self) -> dict:
        """How pages label it: "Annotated paper" or "Lesson" (engine.documents.KINDS)."""
        return KINDS[self.meta.get("kind", "paper")]

    @property
    def arxiv_url(self) -> str:
        return f"https://arxiv.org/abs/{self.meta['arxiv']}"

    @property
    def pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self.meta['arxiv']}"


@dataclass(frozen=True)
class Entry:
    """A glossary entry as its page shows it, with the places the document uses it."""

    id: str
    anchor: str
    name: Markup
    short: Markup
    long: Markup
    see_also: list[tuple[str, str]]
    uses: list[tuple[Use, int]]


def split_front_matter(text: str, path: Path) -> tuple[dict, str]:
    """Separate a section file's TOML front matter (between ``---`` lines) from its body."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise ContentError(f"{path}: must start with a '---' line opening its front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ContentError(f"{path}: front matter is never closed with a '---' line") from None
    try:
        meta = tomllib.loads("\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError as error:
        raise ContentError(f"{path}: front matter is not valid TOML: {error}") from None
    missing = {"id", "title", "number"} - meta.keys()
    unknown = meta.keys() - SECTION_KEYS
    if missing or unknown:
        raise ContentError(f"{path}: front matter missing {sorted(missing)} / unknown keys {sorted(unknown)}")
    return meta, "\n".join(lines[end + 1:])


def load_glossary(path: Path) -> Glossary:
    """Read glossary.toml and check every entry has what a popover needs."""
    data = read_toml(path) if path.is_file() else {}
    terms, symbols = data.get("terms", {}), data.get("symbols", {})
    for term_id, entry in terms.items():
        if not {"term", "short"} <= entry.keys():
            raise ContentError(f"{path}: [terms.{term_id}] needs 'term' and 'short'")
        for other in entry.get("see_also", []):
            if other not in terms:
                raise ContentError(f"{path}: [terms.{term_id}] see_also names unknown term {other!r}")
    for symbol_id, entry in symbols.items():
        if not {"symbol", "short"} <= entry.keys():
            raise ContentError(f"{path}: [symbols.{symbol_id}] needs 'symbol' and 'short'")
    return Glossary(terms, symbols)


def check_sources(meta: dict, path: Path) -> None:
    """An optional ``[[sources]]`` list: each entry a title and an http(s) address, maybe a note."""
    sources = meta.get("sources", [])
    if not isinstance(sources, list):
        raise ContentError(f"{path}: 'sources' must be a list of [[sources]] tables")
    for number, source in enumerate(sources, 1):
        if not isinstance(source, dict) or not {"title", "url"} <= source.keys():
            raise ContentError(f"{path}: [[sources]] entry {number} needs 'title' and 'url'")
        if not str(source["url"]).startswith(("https://", "http://")):
            raise ContentError(f"{path}: [[sources]] entry {number} ({source['title']!r}) needs an http(s) url")


def section_files(document_dir: Path) -> list[Path]:
    return sorted(p for p in document_dir.glob("*.md") if SECTION_FILE.match(p.name))


def render_document(folder: Document, glossary: Glossary, glossary_url: str) -> RenderedDocument:
    """Read and render every section of one document folder."""
    meta = folder.meta
    missing = DOCUMENT_KEYS - meta.keys()
    if missing:
        raise ContentError(f"{folder.folder / 'paper.toml'}: missing {sorted(missing)}")
    check_sources(meta, folder.folder / "paper.toml")
    diagrams_dir = folder.diagrams_dir
    refs = PageRefs(glossary, glossary_url, diagrams_dir, widgets=frozenset(folder.widgets))
    sections: list[Section] = []
    for path in section_files(folder.sections_dir):
        front, body = split_front_matter(path.read_text(encoding="utf-8"), path)
        if any(s.id == front["id"] for s in sections):
            raise ContentError(f"{path}: section id {front['id']!r} is used twice")
        refs.start_section(front["id"], front["title"])
        try:
            html = render_markdown(body, refs)
        except ContentError as error:
            raise ContentError(f"{path}: {error}") from None
        sections.append(Section(
            id=front["id"], title=front["title"], number=str(front["number"]),
            quote=front.get("quote", ""), quote_source=front.get("quote_source", ""),
            quote_link=front.get("quote_link", ""), html=html, source=path, quote_by=front.get("quote_by", ""),
        ))
    plain = PageRefs(glossary, glossary_url, diagrams_dir, tracked=False)
    listed = glossary_entries(glossary, plain, refs, anchor_prefix="glossary-")
    sections, citations, (terms, symbols) = mark_citations(sections, meta.get("sources", []),
                                                           folder.folder / "paper.toml", listed)
    tips = refs.tips() + source_tips(meta.get("sources", []), plain)
    return RenderedDocument(folder.slug, meta, sections, refs, tips, terms, symbols, citations)


# -- citations ---------------------------------------------------------------------------------
_EXTERNAL_LINK = re.compile(r'<a href="(?P<url>https?://[^"]+)">')


def source_key(url: str) -> str:
    """An address as a citation matches it to a source: no fragment or trailing slash, arXiv's PDF as its abstract."""
    url = url.split("#", 1)[0].rstrip("/")
    if "arxiv.org/" in url:
        url = re.sub(r"v\d+$", "", url.replace("arxiv.org/pdf/", "arxiv.org/abs/"))
    return url


def mark_citations(sections: list[Section], sources: list[dict], toml: Path,
                   glossary: tuple[list[Entry], list[Entry]] = ([], [])) -> tuple[list[Section], dict, tuple]:
    """Make every link to a work in the prose, in the glossary the page lists, and every quote's source a
    citation: a trigger for its source's preview (popovers.js), with an anchor the Sources list links
    back to. A link to a work that is not in ``[[sources]]`` is a content error: every citation must
    have its preview."""
    numbers = {source_key(source["url"]): number for number, source in enumerate(sources, 1)}
    citations: dict[int, list[tuple[str, str, str]]] = {}
    if not sources:  # a document without a Sources list (the test fixture) has no previews to give
        return sections, citations, glossary

    def cite(url: str, where: str, number_title: tuple[str, str]) -> tuple[int, str]:
        number = numbers.get(source_key(url))
        if number is None:
            raise ContentError(f"{where}: cites {url}, which is not in {toml}'s [[sources]]")
        uses = citations.setdefault(number, [])
        anchor = f"cite-{number}-{len(uses) + 1}"
        uses.append((anchor, *number_title))
        return number, anchor

    def linked(text: Markup, where: str, number_title: tuple[str, str]) -> Markup:
        def replace(match: re.Match) -> str:
            number, anchor = cite(html.unescape(match["url"]), where, number_title)
            return (f'<a href="{match["url"]}" class="cite" id="{anchor}" data-tip="tip-source-{number}" '
                    f'aria-describedby="tip-source-{number}-text">')
        return Markup(_EXTERNAL_LINK.sub(replace, text))

    marked = []
    for section in sections:
        # A quote's anchor is its own (quote-<section id>), listed by the template.
        quote_cite = numbers.get(source_key(section.quote_link)) if section.quote and section.quote_link else 0
        if quote_cite is None:
            raise ContentError(f"{section.source}: cites {section.quote_link}, which is not in {toml}'s [[sources]]")
        marked.append(replace_fields(section, html=linked(section.html, str(section.source), (section.number, section.title)),
                                     quote_cite=quote_cite))
    glossary_section = next((s for s in sections if s.id == "glossary"), None)
    if glossary_section is not None:  # the glossary the page lists cites its works too
        where = (glossary_section.number, glossary_section.title)
        glossary = tuple([replace_fields(entry, short=linked(entry.short, f"{toml.parent}/glossary.toml", where),
                                         long=linked(entry.long, f"{toml.parent}/glossary.toml", where))
                          for entry in entries] for entries in glossary)
    return marked, citations, glossary


def source_tips(sources: list[dict], plain: PageRefs) -> list[Tip]:
    """One preview per source: the work (authors, year, venue, identifier, as its title gives them) with its
    link, and what this page takes from it."""
    tips = []
    for number, source in enumerate(sources, 1):
        text = Markup('<p class="tip-work"><a href="{0}" tabindex="-1">{1}</a></p>').format(source["url"], source["url"])
        if source.get("note"):
            text += Markup('<p class="tip-uses"><strong>This page takes:</strong> {0}</p>').format(source["note"])
        tips.append(Tip(f"tip-source-{number}", Markup("[{0}] {1}").format(number, source["title"]), text,
                        f"#source-{number}", more=f"Source {number} in the list"))
    return tips


def glossary_entries(glossary: Glossary, refs: PageRefs, used: PageRefs,
                     anchor_prefix: str = "") -> tuple[list[Entry], list[Entry]]:
    """Every term and symbol (alphabetical), definitions rendered with ``refs``, and back-links
    to where the page behind ``used`` uses each one."""

    def uses(found: dict[str, list[Use]], item_id: str) -> list[tuple[Use, int]]:
        # One back-link per section (to its first use there), with how often it is used there.
        by_section: dict[str, list[Use]] = {}
        for use in found.get(item_id, []):
            by_section.setdefault(use.section_id, []).append(use)
        return [(group[0], len(group)) for group in by_section.values()]

    def render(text: str) -> Markup:
        return render_markdown(text, refs) if text else Markup("")

    terms = []
    for term_id, entry in sorted(glossary.terms.items(), key=lambda item: item[1]["term"].lower()):
        refs.start_section("glossary", "Glossary")
        terms.append(Entry(
            id=term_id, anchor=f"{anchor_prefix}{term_id}", name=Markup.escape(entry["term"]),
            short=render(entry["short"]), long=render(entry.get("long", "")),
            see_also=[(f"{anchor_prefix}{other}", glossary.terms[other]["term"]) for other in entry.get("see_also", [])],
            uses=uses(used.term_uses, term_id),
        ))
    symbols = []
    for symbol_id, entry in sorted(glossary.symbols.items()):  # by id: "y-hat", not "\\hat{y}"
        refs.start_section("glossary", "Glossary")
        symbols.append(Entry(
            id=symbol_id, anchor=f"{anchor_prefix}symbol-{symbol_id}", name=Markup(refs.symbol_label(symbol_id)),
            short=render(entry["short"]), long=render(entry.get("long", "")), see_also=[],
            uses=uses(used.symbol_uses, symbol_id),
        ))
    return terms, symbols


# Rendering a document takes seconds, and every app made in one process (the tests make dozens, some
# from copies of a document's folder) would render the same files again: apps share what a document's
# files rendered to, keyed by the folder's name (its address) and every file's path in it and bytes.
# What is kept is read-only.
_RENDERED: dict[tuple, object] = {}
_RENDERED_LOCK = threading.Lock()
_RENDERED_MAX = 32


def _shared(kind: str, document: Document, build):
    files = sorted(p for p in document.folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    key = (kind, document.folder.name,
           tuple((p.relative_to(document.folder).as_posix(), hashlib.sha256(p.read_bytes()).digest()) for p in files))
    with _RENDERED_LOCK:
        if key in _RENDERED:
            return _RENDERED[key]
    made = build()
    with _RENDERED_LOCK:
        if len(_RENDERED) >= _RENDERED_MAX:
            _RENDERED.pop(next(iter(_RENDERED)))
        _RENDERED[key] = made
    return made


class ContentLibrary:
    """Every document's rendered content, made on first use (or all at once by ``prerender``) and kept."""

    def __init__(self, documents: dict[str, Document], reload: bool):
        self.documents = documents
        self.reload = reload
        self._lock = threading.RLock()  # a document build asks for the glossary inside the lock
        self._cache: dict[str, tuple[float, object]] = {}

    def _fingerprint(self, slug: str) -> float:
        """The newest modification time among a document's content files (when reloading)."""
        if not self.reload:
            return 0.0
        document = self.documents[slug]
        files = [*document.sections_dir.rglob("*"), *document.diagrams_dir.rglob("*"), document.folder / "paper.toml",
                 document.glossary_file, document.numbers_file]
        return max((p.stat().st_mtime_ns for p in files if p.is_file()), default=0)

    def _cached(self, slug: str, kind: str, build):
        stamp = self._fingerprint(slug)
        with self._lock:
            hit = self._cache.get(f"{kind}:{slug}")
            if hit is None or hit[0] != stamp:
                hit = (stamp, _shared(kind, self.documents[slug], build))
                self._cache[f"{kind}:{slug}"] = hit
            return hit[1]

    def slugs(self) -> list[str]:
        return list(self.documents)

    def glossary(self, slug: str) -> Glossary:
        return self._cached(slug, "glossary", lambda: load_glossary(self.documents[slug].glossary_file))

    def glossary_url(self, slug: str) -> str:
        return f"/{slug}/glossary/"

    def document(self, slug: str) -> RenderedDocument | None:
        if slug not in self.documents:
            return None
        return self._cached(slug, "document", lambda: render_document(
            self.documents[slug], self.glossary(slug), self.glossary_url(slug)))

    def glossary_page(self, slug: str) -> tuple[RenderedDocument, list[Entry], list[Entry], list[Tip]] | None:
        """The document, its glossary's terms and symbols, and the popovers their definitions use."""
        document = self.document(slug)
        if document is None:
            return None

        def build():
            refs = PageRefs(document.refs.glossary, self.glossary_url(slug), self.documents[slug].diagrams_dir)
            terms, symbols = glossary_entries(document.refs.glossary, refs, document.refs)
            return terms, symbols, refs.tips()

        terms, symbols, tips = self._cached(slug, "glossary-page", build)
        return document, terms, symbols, tips

    def prerender(self) -> None:
        """Render every document and glossary page now: a content error raises here, at start-up."""
        for slug in self.documents:
            self.glossary_page(slug)

    def numbers(self, slug: str) -> dict:
        """The document's numbers ledger (``cited`` and ``computed`` entries)."""
        path = self.documents[slug].numbers_file
        return read_toml(path) if path.is_file() else {"cited": [], "computed": []}


def init_app(app: Flask) -> None:
    library = ContentLibrary(app.extensions["documents"], app.config["CONTENT_RELOAD"])
    app.extensions["content"] = library
    if not app.config["CONTENT_RELOAD"]:
        library.prerender()


def library() -> ContentLibrary:
    return current_app.extensions["content"]
