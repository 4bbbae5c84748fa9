"""Every number the annotated paper states is cited or computed.

The numbers are taken from each document's rendered page (/mmlu/, /mmlu-pro/, /scoring-lesson/)
as a reader sees it, by the one matcher the page's "show sources of numbers" marks them with
(engine/numbers.py, whose docstring gives what is read and the narrow exemptions: small counts,
years, digits in names, references). Each must appear in content/<document>/numbers.toml, either
[[cited]] with a source or [[computed]] with an expression that ``from explainers import *``
evaluates to that value.
"""
from __future__ import annotations

import math
import re
import tomllib
from html.parser import HTMLParser

import pytest
from conftest import CONTENT, documents

from engine.numbers import ledger_entries, ledger_values, normalise, stated_numbers


def evaluate(expr: str):
    namespace: dict = {"math": math}
    exec("from explainers import *", namespace)
    return eval(expr, namespace)


def formats_to(result, value: str) -> bool:
    """Does ``result`` (a number or text) read as ``value`` when written to value's precision?"""
    plain = value.replace(",", "").replace("%", "").replace("−", "-").strip()
    if isinstance(result, str):
        return result == value
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return format(float(result), f".{decimals}f") == plain


def page_and_ledger(app, slug: str) -> tuple[str, dict]:
    with app.test_request_context("/"):
        ledger = app.extensions["content"].numbers(slug)
    html = app.test_client().get(f"/{slug}/").get_data(as_text=True)
    return html, ledger


SLUGS = documents()  # every document in content/, the scoring lesson too


@pytest.fixture(scope="module")
def real(real_app) -> dict:
    """slug -> (the served page, the ledger)."""
    return {slug: page_and_ledger(real_app, slug) for slug in SLUGS}


def ledger_file(slug: str) -> dict:
    """content/<slug>/numbers.toml as written (read at collection, without building the app)."""
    path = CONTENT / slug / "numbers.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"cited": [], "computed": []}


@pytest.mark.parametrize("slug", SLUGS)
def test_every_number_on_the_page_is_cited_or_computed(slug, real):
    html, ledger = real[slug]
    known = ledger_values(ledger)
    missing = sorted({(n.value, n.context) for n in stated_numbers(html) if n.value not in known})
    assert not missing, f"numbers not in the {slug} numbers.toml:\n" + "\n".join(f"{n}: …{c}…" for n, c in missing)


# A [[cited]] source must name a primary source (README "Page content"): the paper's own section,
# table, figure or appendix; another paper by arXiv id; a dataset card, our copy of the released data
# (``data:``, whose SOURCE.md names the commit) or a repository commit; a named web page by its
# address; or, for the page's own teaching numbers, the word "illustrative". A seed document is a
# lead, never a source, so a source that names only a seed (or nothing) fails.
PRIMARY_SOURCE = re.compile(
    r"§\s*\d"                                              # §3, §4.1
    r"|\b(?:Table|Figure|Appendix)\s+[0-9A-Z]"             # Table 1, Figure 11, Appendix A
    r"|\bAbstract\b"
    r"|\barXiv:?\s*\d{4}\.\d{4,5}"                          # arXiv 2406.01574 §1
    r"|\bdataset card\b|\bmodel card\b"
    r"|^data: \S"                                           # our copy of the release (data/mmlu/SOURCE.md)
    r"|\bcommit [0-9a-f]{7,40}\b|@[0-9a-f]{7,40}\b"        # a repository commit
    r"|https://\S+"                                        # a named page, by its address
    r"|^illustrative\b"                                     # the page's own worked examples
)
SEED = re.compile(r"\bseed\s*\d{3}\b|\bseeds?/", re.IGNORECASE)


def names_a_primary_source(source: str) -> bool:
    """True when ``source`` names a primary source; a seed mention does not count towards one."""
    return bool(PRIMARY_SOURCE.search(SEED.sub("", source or "").strip()))


@pytest.mark.parametrize("source, ok", [
    ("§3: 57 subjects", True),
    ("Table 1: GPT-3 X-Large few-shot average", True),
    ("Appendix A, Figure 11: few-shot calibration", True),
    ("arXiv 2406.01574 §1: GPT-4o improves by about 1%", True),
    ("data: ../shared/data/mmlu/SOURCE.md, released test rows", True),
    ("github.com/hendrycks/test commit 8d4768d: 1,543 val rows", True),
    ("TIGER-Lab/MMLU-Pro dataset card: 12,032 test questions", True),
    ("https://huggingface.co/blog/evaluating-mmlu-leaderboard: LLaMA 65B, HELM", True),
    ("illustrative letter probability", True),
    ("seed 002: GPT-4o on MMLU", False),
    ("seed 001", False),
    ("Seed 000, the calibration example", False),
    ("", False),
    ("   ", False),
    ("year", False),
    ("GPT-3's 43.9%, rounded", False),
])
def test_the_primary_source_rule(source, ok):
    assert names_a_primary_source(source) is ok


@pytest.mark.parametrize("slug", SLUGS)
def test_cited_numbers_name_a_primary_source(slug, real):
    bad = [f"{entry['value']}: {entry.get('source', '')!r}" for entry in real[slug][1].get("cited", [])
           if not names_a_primary_source(entry.get("source", ""))]
    assert not bad, f"cited numbers without a primary source in the {slug} numbers.toml:\n" + "\n".join(bad)


COMPUTED = [(slug, entry) for slug in SLUGS for entry in ledger_file(slug).get("computed", [])]


@pytest.mark.parametrize("slug, entry", COMPUTED, ids=[f"{slug}:{e['value']}={e['expr']}" for slug, e in COMPUTED])
def test_computed_number(slug, entry):
    result = evaluate(entry["expr"])
    assert formats_to(result, entry["value"]), f"{entry['expr']} gives {result!r}, the page says {entry['value']}"


@pytest.mark.parametrize("slug", SLUGS)
def test_the_ledger_lists_computed_numbers(slug, real):
    assert real[slug][1] == ledger_file(slug)  # the app reads the same ledger the parameters come from
    # The papers compute at least ten of their numbers; the scoring lesson, a shorter document, five.
    assert len(real[slug][1].get("computed", [])) >= (5 if slug == "scoring-lesson" else 10)


# -- "show sources of numbers" (?sources=on) ---------------------------------------------------------
class Marks(HTMLParser):
    """Each number mark on a page: its text, the characters just before it, the entry it links to and
    its popover; and the page's popovers and appendix entries by id."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.marks: list[dict] = []
        self.open: dict | None = None
        self.depth = 0
        self.before = ""
        self.ids: dict[str, dict] = {}  # id -> {"tag", "text"} for popovers' texts and appendix entries
        self.collecting: list[tuple[str, int]] = []
        self.stack = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "mspace", "col"}:
            self.stack += 1
            if self.open is not None:
                self.depth += 1
            if attrs.get("id", "").startswith(("tip-number-", "number-")):
                self.ids[attrs["id"]] = {"tag": tag, "text": "", "attrs": attrs}
                self.collecting.append((attrs["id"], self.stack))
        if "number-mark" in (attrs.get("class") or "").split():
            self.open = dict(attrs, tag=tag, text="", before=self.before)
            self.depth = 0

    def handle_endtag(self, tag):
        if self.open is not None:
            if self.depth == 0:
                self.marks.append(self.open)
                self.open = None
            else:
                self.depth -= 1
        while self.collecting and self.collecting[-1][1] == self.stack:
            self.collecting.pop()
        self.stack -= 1

    def handle_data(self, data):
        if self.open is not None:
            self.open["text"] += data
        for element_id, _ in self.collecting:
            self.ids[element_id]["text"] += data
        self.before = (self.before + data)[-4:]


def marks_of(page: str) -> Marks:
    parser = Marks()
    parser.feed(page)
    return parser


@pytest.fixture(scope="module")
def shown(real_app) -> dict:
    """slug -> the page with "show sources of numbers" on."""
    client = real_app.test_client()
    return {slug: client.get(f"/{slug}/?sources=on").get_data(as_text=True) for slug in SLUGS}


@pytest.mark.parametrize("slug", SLUGS)
def test_sources_of_numbers_mark_every_ledger_number_with_its_entry(slug, real, shown):
    html, ledger = real[slug]
    entries = {entry.number: entry for entry in ledger_entries(ledger)}
    backed = [n for n in stated_numbers(html) if n.value in ledger_values(ledger)]
    found = marks_of(shown[slug])
    assert len(backed) > 10 and len(found.marks) == len(backed), "every ledger-backed number is marked, nothing else"
    for stated, mark in zip(backed, found.marks, strict=True):
        where = f"{mark['text']!r} near …{stated.context}…"
        assert normalise(mark["text"]) == stated.value, f"marks in page order: {where}"
        entry = entries[int(mark["data-entry"])]
        assert normalise(entry.value) == normalise(mark["text"]), f"the mark's text equals its ledger value: {where}"
        # The right entry: where the ledger spells the number as the page does (its sign, its commas), that one.
        # (a sign written against it, or an equation's unary minus after "=", "(" or "≈")
        signed = re.search(r"[−-]$|[=(≈]\s*[−-]\s*$", mark["before"])
        spelled = ("-" if signed else "") + mark["text"]
        exact = [e for e in entries.values() if e.value.replace("−", "-").removesuffix("%") == spelled]
        assert not exact or entry in exact, f"{where}: entry {entry.value!r}, the ledger has {exact[0].value!r}"
        # Its popover names the entry; its link lands on the entry in the appendix.
        tip = found.ids[mark["data-tip"]]
        assert tip["attrs"].get("role") == "tooltip" and mark["aria-describedby"] == f"{mark['data-tip']}-text"
        assert (entry.expr or entry.source) in tip["text"], where
        if mark["tag"] == "a":
            assert mark["href"] == f"#number-{entry.number}"
        listed = found.ids[f"number-{entry.number}"]
        assert listed["tag"] == "li" and entry.value in listed["text"] and (entry.expr or entry.source) in listed["text"]


@pytest.mark.parametrize("slug", SLUGS)
def test_sources_of_numbers_are_off_by_default(slug, real, real_app):
    html, _ = real[slug]
    for page in (html, real_app.test_client().get(f"/{slug}/?sources=off").get_data(as_text=True)):
        assert "number-mark" not in page and 'id="number-sources"' not in page
        assert 'id="sources-switch"' in page and 'aria-checked="false"' in page and f'href="/{slug}/?sources=on"' in page


def test_a_bad_sources_value_is_a_400(real_app):
    response = real_app.test_client().get("/mmlu/?sources=<b>yes</b>")
    assert response.status_code == 400 and "<b>yes" not in response.get_data(as_text=True)


# -- the rules themselves, on the fixture paper -------------------------------------------------
@pytest.fixture(scope="module")
def fixture_page(fixture_app):
    return page_and_ledger(fixture_app, "demo")


def test_fixture_numbers_found_where_a_reader_sees_them(fixture_page):
    FIXTURE_HTML, _ = fixture_page
    numbers = {n.value for n in stated_numbers(FIXTURE_HTML)}
    # prose (0.0433), a margin note (43.9), an equation's <mn> (0.25, 100), and a count above ten (12);
    # not the year 2020, small counts, code blocks or the citation block.
    assert numbers == {"0.0433", "43.9", "0.25", "100", "12"}


def test_a_number_missing_from_the_ledger_is_reported(fixture_page):
    FIXTURE_HTML, FIXTURE_LEDGER = fixture_page
    ledger = dict(FIXTURE_LEDGER, cited=[e for e in FIXTURE_LEDGER["cited"] if e["value"] != "43.9"])
    assert not [n.value for n in stated_numbers(FIXTURE_HTML) if n.value not in ledger_values(FIXTURE_LEDGER)]
    assert [n.value for n in stated_numbers(FIXTURE_HTML) if n.value not in ledger_values(ledger)] == ["43.9"]


def test_a_computed_value_that_does_not_match_fails():
    assert formats_to(evaluate("round(standard_error(0.25, 100), 4)"), "0.0433")
    assert not formats_to(evaluate("round(standard_error(0.25, 100), 4)"), "0.0434")
    assert formats_to(14079, "14,079")
