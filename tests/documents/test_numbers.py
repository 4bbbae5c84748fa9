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

import pytest
from conftest import CONTENT, documents

from engine.numbers import ledger_values, stated_numbers


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
