"""The annotated-paper pages: index, paper, glossary and errors, rendered by the real pipeline
from the real content (and from fixture content for the pipeline's own rules)."""
from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as etree
from html.parser import HTMLParser
from itertools import pairwise

import pytest

from content_helpers import FIXTURE_CONFIG, FIXTURES, fixture_app, real_app, rendered_document
from engine import create_app
from engine.markdown_ext import ContentError

# What each real paper's page must hold: its sections in order (by permalink), its diagrams and
# widget slots, and the title block's facts. MMLU's sections follow the page specification (seed 000);
# MMLU-Pro's follow the paper (issue 14). The checks below run over every paper.
PAGES = {
    "mmlu": {
        "sections": ["abstract", "introduction", "related-work", "multitask-test", "four-groups", "try-chance",
                     "experiments", "setup", "results-size", "results-lopsided", "calibration",
                     "discussion", "conclusion", "appendix-a", "appendix-b", "what-happened-next", "glossary"],
        "short": ("conclusion", "glossary"),  # a short summary and the glossary itself
        "diagrams": ["prompt-anatomy", "splits-flow", "four-groups"],
        "widgets": ["chance-explorer", "calibration-bars", "scaling-plot", "group-bars", "subject-bars", "prompt-anatomy"],
        "authors": ("Dan Hendrycks", "Jacob Steinhardt"), "arxiv": "2009.03300", "bibtex": "@inproceedings{",
        "year": "2020", "quoted": r"Hendrycks et al\. \(2020\)", "title": "Measuring Massive Multitask Language Understanding",
    },
    "mmlu-pro": {
        "sections": ["abstract", "introduction", "related-work", "benchmark", "initial-filtering", "question-collection",
                     "option-augmentation", "expert-review", "experimental-setup", "results", "error-analysis",
                     "difficulty", "reasoning", "robustness", "limitations", "what-happened-next", "run-it-yourself",
                     "glossary"],
        "short": ("glossary",),
        "diagrams": ["pipeline", "prompt-anatomy"],
        "widgets": ["guessing-floor", "mmlu-vs-pro", "cot-vs-direct", "prompt-spread", "error-causes", "category-bars"],
        "authors": ("Yubo Wang", "Wenhu Chen"), "arxiv": "2406.01574", "bibtex": "@misc{",
        "year": "2024", "quoted": r"Wang et al\. \(2024\)",
        "title": "MMLU-Pro: A More Robust and Challenging Multi-Task Language Understanding Benchmark",
    },
}


class Elements(HTMLParser):
    """Every element's tag and attributes, in document order."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def with_class(self, name: str) -> list[dict]:
        return [attrs for _, attrs in self.found if name in (attrs.get("class") or "").split()]

    def ids(self) -> list[str]:
        return [attrs["id"] for _, attrs in self.found if "id" in attrs]


@pytest.fixture(scope="module")
def client_module():
    return real_app().test_client()


@pytest.fixture(scope="module", params=list(PAGES))
def slug(request):
    return request.param


@pytest.fixture(scope="module")
def spec(slug):
    return PAGES[slug]


@pytest.fixture(scope="module")
def paper_html(client_module, slug):
    response = client_module.get(f"/{slug}/")
    assert response.status_code == 200
    return response.get_data(as_text=True)


@pytest.fixture(scope="module")
def glossary_html(client_module, slug):
    response = client_module.get(f"/{slug}/glossary/")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_index_lists_the_paper(client_module, slug, spec):
    html = client_module.get("/").get_data(as_text=True)
    assert f'<a href="/{slug}/">{spec["title"]}</a>' in html


def test_title_block_has_authors_year_arxiv_and_bibtex(paper_html, spec):
    head = paper_html.split('<nav class="toc"')[0]
    assert all(author in head for author in spec["authors"])
    assert f'href="https://arxiv.org/abs/{spec["arxiv"]}"' in head
    assert re.search(r'<pre[^>]*id="bibtex"><code>' + re.escape(spec["bibtex"]), head)
    assert spec["year"] in head


def test_every_specified_section_is_present_in_order_with_a_permalink(paper_html, spec):
    elements = Elements(paper_html)
    sections = [attrs["id"] for attrs in elements.with_class("paper-section")]
    assert [s for s in sections if s in spec["sections"]] == spec["sections"]
    toc = re.search(r'<nav class="toc".*?</nav>', paper_html, re.S).group()
    for section in sections:
        assert f'href="#{section}"' in toc
        assert f'<a class="permalink" href="#{section}"' in paper_html
        assert f'class="copy-link" data-section="{section}"' in paper_html


def test_sections_climb_the_ladder(paper_html, slug, spec):
    bodies = {section.id: str(section.html) for section in rendered_document(real_app(), slug).sections}
    for section in spec["sections"]:
        if section in spec["short"]:
            continue
        assert 'class="rung rung-everyday-picture"' in bodies[section], f"{section}: no everyday picture"
        assert 'class="rung rung-why-it-matters"' in bodies[section], f"{section}: no why it matters"
    all_rungs = set(re.findall(r'class="rung rung-([a-z-]+)"', paper_html))
    assert {"everyday-picture", "tiny-example", "diagram", "the-math", "why-it-matters"} <= all_rungs


class Folds(HTMLParser):
    """A section's top-level blocks, each as (tag, class, summary words or None, the tags and classes
    it holds): what a phone shows folded and what it shows open."""

    VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "mspace"}

    def __init__(self, html: str):
        super().__init__()
        self.blocks: list[dict] = []
        self.depth = 0
        self.in_summary = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.depth == 0:
            fold = tag == "details" and "phone-fold" in (attrs.get("class") or "")
            self.blocks.append({"tag": tag, "class": attrs.get("class") or "", "fold": fold, "summary": None, "holds": []})
        elif self.depth == 1 and tag == "summary" and self.blocks[-1]["fold"]:
            self.in_summary = True
        else:
            self.blocks[-1]["holds"].append(f"{tag}.{attrs.get('class') or ''}")
        if tag not in self.VOID:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag not in self.VOID:
            self.depth -= 1
        if tag == "summary":
            self.in_summary = False

    def handle_data(self, data):
        if self.in_summary:
            self.blocks[-1]["summary"] = (self.blocks[-1]["summary"] or "") + data

    def handle_comment(self, data):
        if self.depth and data.startswith("widget:"):
            self.blocks[-1]["holds"].append(f"widget {data}")


def test_on_a_phone_the_math_and_the_asides_fold_and_nothing_else(slug):
    """Each "The math" rung is one fold right under its heading; every equation and snippet is in a
    fold, every "Reading it", "Try it" and note is a fold of its own; no fold holds a widget, a
    diagram or a heading (engine/markdown_shape.py, PhoneFoldTreeprocessor)."""
    folds = 0
    for section in rendered_document(real_app(), slug).sections:
        blocks = Folds(str(section.html)).blocks
        for before, block in pairwise(blocks):
            if before["tag"] == "h3" and "rung-the-math" in before["class"]:
                assert block["fold"] and block["summary"] == "Show the math", f"{section.id}: a math rung not folded"
        for block in blocks:
            if block["fold"]:
                folds += 1
                assert block["summary"] in ("Show the math", "Show it in Python", "How to read the figure",
                                            "What to try with the figure", "A note"), block["summary"]
                held = " ".join(block["holds"])
                assert "widget widget:" not in held and "figure.diagram" not in held and "h3." not in held, section.id
                continue
            shown = f"{block['tag']}.{block['class']}"
            for folded in ("div.equation", "div.snippet", "step reading-it", "step try-it", "margin-note"):
                assert folded not in shown, f"{section.id}: {shown} is not folded on a phone"
    assert folds >= 10


def test_a_section_with_figures_links_first_to_each(paper_html, spec):
    for section in paper_html.split('<section class="paper-section"')[1:]:
        widgets = re.findall(r'<section class="widget[^"]*" id="(w-[a-z0-9-]+)"', section)
        skips = re.findall(r'<a class="figure-skip" href="#(w-[a-z0-9-]+)">Skip to the figure “[^”]+”</a>', section)
        assert skips == widgets, f"{section[:60]}: links {skips}, widgets {widgets}"
        if skips:
            assert section.index('class="figure-skips"') < section.index("<h2"), "the links come first"


def test_quotes_name_their_section_and_link_the_original(paper_html, spec):
    quotes = re.findall(r'<figure class="paper-quote">(.*?)</figure>', paper_html, re.S)
    assert len(quotes) >= 6
    for quote in quotes:
        assert re.search(spec["quoted"] + r", (§|Abstract|Appendix)", quote)
        assert f'href="https://arxiv.org/abs/{spec["arxiv"]}' in quote


def test_glossary_has_forty_terms_and_every_used_one_has_a_popover(paper_html, slug):
    elements = Elements(paper_html)
    ids = elements.ids()
    assert len(ids) == len(set(ids)), "duplicate ids on the page"
    terms = elements.with_class("term")
    assert len({t["data-tip"] for t in terms}) >= 40
    for term in terms:
        assert term["href"].startswith(f"/{slug}/glossary/#")
        assert term["aria-describedby"] in ids and term["data-tip"] in ids
    tips = [attrs for tag, attrs in elements.found if attrs.get("role") == "tooltip"]
    assert all("hidden" in tip for tip in tips)


def test_every_equation_symbol_is_focusable_and_explained(paper_html):
    elements = Elements(paper_html)
    ids = set(elements.ids())
    symbols = [attrs for tag, attrs in elements.found if tag == "mrow" and "sym" in (attrs.get("class") or "")]
    assert len({s["data-tip"] for s in symbols}) >= 12
    for symbol in symbols:
        assert symbol["tabindex"] == "0"
        assert symbol["aria-describedby"] in ids and symbol["data-tip"] in ids


NAMED_FUNCTIONS = {"max", "min", "log", "exp", "ln", "sup", "inf", "lim", "arg", "Pr"}


def test_every_identifier_in_every_equation_explains_itself(slug):
    """Every <mi> in the paper's math (not the symbol lists under equations) sits inside a
    focusable symbol, except named functions such as max."""
    ns = "{http://www.w3.org/1998/Math/MathML}"
    bare = []

    def walk(element, explained, section_id):
        explained = explained or element.get("class") == "sym"
        if element.tag == f"{ns}mi" and not explained and element.text not in NAMED_FUNCTIONS:
            bare.append((section_id, element.text))
        for child in element:
            walk(child, explained, section_id)

    for section in rendered_document(real_app(), slug).sections:
        html = re.sub(r'<details class="symbol-key">.*?</details>', "", str(section.html), flags=re.S)
        for math in re.findall(r"<math.*?</math>", html, re.S):
            walk(etree.fromstring(math), False, section.id)
    assert not bare, f"identifiers with no \\g{{…}} explanation: {bare}"


def test_every_equation_is_followed_by_its_in_words_sentence(paper_html):
    equations = re.findall(r'<div class="equation".*?</div>\s*(<p[^>]*>)', paper_html, re.S)
    assert len(equations) >= 8
    assert all('class="step in-words"' in following for following in equations)


def test_diagrams_are_inline_svg_with_text_alternatives_and_captions(paper_html, spec):
    for name in spec["diagrams"]:
        figure = re.search(rf'<figure class="diagram" id="fig-{name}">(.*?)</figure>', paper_html, re.S)
        assert figure, f"no diagram {name}"
        assert re.search(r"<svg[^>]*role=\"img\"", figure.group(1)) and "<title" in figure.group(1)
        assert "<figcaption>" in figure.group(1)


def test_widget_slots_are_in_place(paper_html, spec):
    for name in spec["widgets"]:
        assert f'data-widget="{name}"' in paper_html


def test_margin_notes_and_steps_are_marked(paper_html):
    assert '<aside class="margin-note" role="note"><span class="step-label">Note:</span>' in paper_html
    assert '<p class="step reading-it"><span class="step-label">Reading it:</span>' in paper_html


def test_pages_obey_the_content_security_policy(client_module, paper_html, glossary_html):
    index = client_module.get("/").get_data(as_text=True)
    for html in (index, paper_html, glossary_html):
        for tag, attrs in Elements(html).found:
            assert "style" not in attrs, f"inline style attribute on <{tag}>"
            assert not [name for name in attrs if name.startswith("on")], f"inline event handler on <{tag}>"
            assert tag != "script" or "src" in attrs, "inline script"


def test_glossary_page_links_back_to_every_use(paper_html, glossary_html, slug):
    elements = Elements(glossary_html)
    entries = elements.with_class("glossary-entry")
    assert len(entries) >= 40 + 12
    back_links = re.findall(rf'href="/{slug}/#(use-(?:term|sym)-[^"]+)"', glossary_html)
    paper_ids = set(Elements(paper_html).ids())
    assert len(back_links) >= 40
    assert set(back_links) <= paper_ids
    # every term the paper uses has at least one back-link on the glossary page
    used = {t["data-tip"].removeprefix("tip-term-") for t in Elements(paper_html).with_class("term")}
    linked = {re.match(r"use-term-(.+)-\d+$", link).group(1) for link in back_links if link.startswith("use-term-")}
    assert used == linked


@pytest.mark.parametrize("path", ["/nope/", "/mmlu/no-such-page", "/mmlu/glossary/nothing", "/mmlu-pro/no-such-page",
                                  "/static/none.css"])
def test_unknown_paths_get_a_friendly_404(client_module, path):
    response = client_module.get(path)
    assert response.status_code == 404
    assert "Traceback" not in response.get_data(as_text=True)
    if not path.startswith("/static/"):
        assert "Back to the list of annotated papers" in response.get_data(as_text=True)
    if path == "/nope/":  # a lesson is a document too, so the message does not say "paper"
        assert "There is no document at /nope/." in response.get_data(as_text=True)


# -- the pipeline's rules, on fixture content ---------------------------------------------------
@pytest.fixture()
def fixture_client():
    return fixture_app().test_client()


def test_fixture_paper_renders_every_construct(fixture_client):
    html = fixture_client.get("/demo/").get_data(as_text=True)
    assert '<a aria-describedby="tip-term-standard-error-text" class="term"' in html
    assert ">typical wobble</a>" in html  # [[id|shown text]]
    assert "<code>[[not-a-term]]</code>" in html and r"<code>\(x\)</code>" in html  # code stays code
    assert '<figure class="diagram" id="fig-box">' in html and "<figcaption><span class=\"step-label\">Figure:</span>" in html
    assert '<p class="step in-words">' in html and '<p class="step with-numbers">' in html
    assert 'data-widget="coin-flips" data-paper="demo"' in html  # the fixture paper's own widget
    assert '<span class="snippet-result"># → 0.0433</span>' in html


def test_glossary_back_links_count_uses_per_section(fixture_client):
    html = fixture_client.get("/demo/glossary/").get_data(as_text=True)
    chance = re.search(r'<div class="glossary-entry" id="chance">(.*?)</div>', html, re.S).group(1)
    assert 'href="/demo/#use-term-chance-1">Introduction</a> (2×)' in chance
    assert 'href="/demo/#use-term-chance-3">Second thoughts</a>' in chance
    assert 'href="#standard-error">standard error</a>' in chance  # see also


def broken_copy(tmp_path, section_text: str, reload: bool = False) -> dict:
    """The fixture paper copied with one more section; returns the app configuration for it."""
    papers = tmp_path / "content"
    shutil.copytree(FIXTURES / "content", papers)
    (papers / "demo" / "sections" / "03-broken.md").write_text(section_text, encoding="utf-8")
    return dict(FIXTURE_CONFIG, CONTENT_DIR=papers, CONTENT_RELOAD=reload)


@pytest.mark.parametrize("body, message", [
    ("[[no-such-term]]", "unknown glossary term"),
    (r"\( \g{no-such-symbol}{x} \)", "unknown symbol"),
    (r"$$ \nosuchcommand $$", "unsupported command"),
    ("[[diagram no-such-diagram]]", "no diagram"),
])
def test_unknown_ids_fail_loudly(tmp_path, body, message):
    config = broken_copy(tmp_path, f'---\nid = "broken"\ntitle = "Broken"\nnumber = ""\n---\n\n{body}\n')
    with pytest.raises(ContentError, match=message):  # at start-up, before any reader sees it
        create_app(config)


def test_a_content_error_while_authoring_is_a_friendly_500(tmp_path):
    """With CONTENT_RELOAD (authors' --dev), content renders on request: an error is a friendly page."""
    config = broken_copy(tmp_path, '---\nid = "broken"\ntitle = "Broken"\nnumber = ""\n---\n\n[[no-such-term]]\n', reload=True)
    response = create_app(config).test_client().get("/demo/")
    assert response.status_code == 500
    body = response.get_data(as_text=True)
    assert "Something went wrong" in body and "Traceback" not in body and "no-such-term" not in body


def test_front_matter_errors_name_the_file(tmp_path):
    config = broken_copy(tmp_path, "no front matter here\n")
    with pytest.raises(ContentError, match="03-broken.md: must start with"):
        create_app(config)


def test_glossary_entries_are_checked(tmp_path):
    config = broken_copy(tmp_path, '---\nid = "fine"\ntitle = "Fine"\nnumber = ""\n---\n\nText.\n')
    glossary = tmp_path / "content" / "demo" / "glossary.toml"
    glossary.write_text(glossary.read_text() + '\n[terms.lonely]\nterm = "lonely"\nshort = "x"\nsee_also = ["nobody"]\n')
    with pytest.raises(ContentError, match="see_also names unknown term 'nobody'"):
        create_app(config)


def test_an_unknown_widget_fails_at_start_up(tmp_path):
    config = broken_copy(tmp_path, '---\nid = "w"\ntitle = "W"\nnumber = ""\n---\n\n[[widget no-such-widget]]\n')
    with pytest.raises(ContentError, match="no widget 'no-such-widget' in the document's widget list"):
        create_app(config)


# -- the Sources block: every work the page cites, with a link ----------------------------------
def test_sources_block_ends_the_page_and_links_every_work(paper_html, slug):
    document = rendered_document(real_app(), slug)
    assert len(document.sources) >= 10
    block = re.search(r'<section class="paper-section paper-sources" id="sources".*?</section>', paper_html, re.S)
    assert block, "no Sources block"
    assert paper_html.index('id="sources"') > paper_html.index('id="glossary"')  # at the end of the page
    toc = re.search(r'<nav class="toc".*?</nav>', paper_html, re.S).group()
    assert 'href="#sources"' in toc
    for source in document.sources:
        assert f'<a href="{source["url"]}">' in block.group(), source["title"]


def test_every_arxiv_paper_the_page_or_ledger_names_is_in_the_sources(slug):
    document = rendered_document(real_app(), slug)
    listed = {m for s in document.sources for m in re.findall(r"arxiv\.org/(?:abs|pdf)/(\d{4}\.\d{4,5})", s["url"])}
    named = set()
    for section in document.sections:
        named |= set(re.findall(r"arxiv\.org/(?:abs|pdf)/(\d{4}\.\d{4,5})", section.source.read_text(encoding="utf-8")))
    ledger = real_app().extensions["content"].numbers(slug)
    for entry in ledger.get("cited", []):
        named |= set(re.findall(r"arXiv:?\s*(\d{4}\.\d{4,5})", entry["source"]))
    assert named and not named - listed, f"cited but not under Sources: {sorted(named - listed)}"


@pytest.mark.parametrize("sources, message", [
    ('[[sources]]\ntitle = "No address"\n', "needs 'title' and 'url'"),
    ('[[sources]]\ntitle = "Odd"\nurl = "ftp://example.org/x"\n', "needs an http"),
])
def test_sources_entries_are_checked(tmp_path, sources, message):
    config = broken_copy(tmp_path, '---\nid = "fine"\ntitle = "Fine"\nnumber = ""\n---\n\nText.\n')
    paper_toml = tmp_path / "content" / "demo" / "paper.toml"
    paper_toml.write_text(paper_toml.read_text() + "\n" + sources)
    with pytest.raises(ContentError, match=message):
        create_app(config)


def test_the_two_papers_link_each_other(client_module):
    mmlu = client_module.get("/mmlu/").get_data(as_text=True)
    pro = client_module.get("/mmlu-pro/").get_data(as_text=True)
    assert '<a href="/mmlu-pro/">MMLU-Pro, annotated</a>' in mmlu
    assert '<a href="/mmlu/">MMLU page</a>' in pro and '<a href="/mmlu/#what-happened-next">' in pro


@pytest.mark.parametrize("slug", ["mmlu", "mmlu-pro", "scoring-lesson"])
def test_every_citation_has_a_preview_and_the_sources_link_both_ways(slug):
    """Every link to a work in the prose and every quote's "Original" is a citation: it names a source's
    preview (a hidden tooltip with the work and what the page takes from it), and the numbered Sources
    list links back to each citation."""
    page = real_app().test_client().get(f"/{slug}/").get_data(as_text=True)
    prose = page.split('<section class="paper-section paper-sources"')[0]
    bodies = re.findall(r'<div class="section-body">(.*?)</section>', prose, re.S)
    prose_links = [link for body in bodies for link in re.findall(r'<a href="https?://(?!localhost)[^"]+"[^>]*>', body)]
    quotes = re.findall(r'<figcaption>.*?</figcaption>', page, re.S)
    quote_links = [link for caption in quotes for link in re.findall(r'<a href="https?://[^"]+"[^>]*>', caption)]
    citations = prose_links + quote_links
    assert citations, "the page cites something"
    sources = re.findall(r'<li id="source-(\d+)">', page)
    assert sources == [str(n) for n in range(1, len(sources) + 1)] and '<ol class="source-list">' in page
    for link in citations:
        tip = re.search(r'data-tip="(tip-source-(\d+))" aria-describedby="tip-source-\2-text"', link)
        assert tip, f"a citation without a preview: {link}"
        assert f'<div class="tip" id="{tip[1]}" role="tooltip" hidden>' in page
        anchor = re.search(r'id="((?:cite|quote)-[^"]+)"', link)
        if anchor:  # the prose's citations and the quotes' sources are linked back from their source
            assert f'href="#{anchor[1]}"' in page, anchor[1]
    for back in re.findall(r'class="cite-back" href="#([^"]+)"', page):
        assert f'id="{back}"' in page, back
    for number in sources:
        preview = re.search(rf'<div class="tip" id="tip-source-{number}" role="tooltip" hidden>(.*?)</div>\s*</div>',
                            page, re.S)
        assert preview and 'class="tip-work"' in preview[1] and f'href="#source-{number}"' in preview[1]
