"""Printed documents, measured from the PDF Chromium prints (A4, as a reader's "Print" makes it).

tests/browser/print-pdf.mjs prints each document and marks each picture's top-left and bottom-right
corners with invisible text ("PDFMARK-S-<n>", "PDFMARK-E-<n>"). Here PyMuPDF reads the PDF: both
marks of a picture must be on one page (a chart or diagram is never cut across pages), and every
piece of text inside the box they span, the chart's axis labels and keys, must be at least 8 pt.

And no page but a document's last is more than 40 % blank: a block too tall for what is left of a page
moves to the next one and leaves the rest of this one empty (the category bars once left a page with
only their title in an empty frame, and another 90 % blank before it). The blank share of a page is
measured from what is drawn on it (text, images, lines and filled shapes: PyMuPDF reads them from the
PDF) inside the page's margins: the height not covered by anything drawn, counting only gaps of 1 cm or
more (the space between lines and paragraphs is part of the text). A frame (a rectangle drawn only as
its outline, as a widget's card) covers its top and bottom edges, not the empty space inside it.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from tests.conftest import documents

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT = REPO_ROOT / "tests" / "artifacts" / "print"
SMALLEST_PT = 8.0
MARK = re.compile(r"PDFMARK-([SE])-(\d+)")
MOST_BLANK = 0.40
GAP_PT = 28.35  # 1 cm: a vertical run with nothing drawn at least this tall counts as blank
PT_PER_MM = 72 / 25.4


def page_margins_pt() -> tuple[float, float]:
    """The top and bottom margins of a printed page, in points, from print.css's @page rule."""
    rule = re.search(r"@page\s*{\s*margin:\s*([\d.]+)mm", (REPO_ROOT / "static" / "css" / "print.css").read_text())
    assert rule, "print.css names no @page margin in mm"
    return float(rule[1]) * PT_PER_MM, float(rule[1]) * PT_PER_MM


def drawn_bands(page: pymupdf.Page) -> list[tuple[float, float]]:
    """The vertical extent (top, bottom) of everything drawn on the page except the figure marks: each
    text span, each image and each line or filled shape (white fills are nothing drawn); a frame
    (a rectangle stroked, not filled, larger than a box around a word) counts as its top and bottom edges."""
    bands = [(span["bbox"][1], span["bbox"][3]) for span in spans(page) if not MARK.fullmatch(span["text"].strip())]
    bands += [(image["bbox"][1], image["bbox"][3]) for image in page.get_image_info()]
    for drawing in page.get_drawings():
        box, fill = drawing["rect"], drawing.get("fill")
        if drawing["type"] == "f" and fill and min(fill) > 0.97:
            continue
        if (drawing["type"] == "s" and box.height > 40 and box.width > 40
                and all(item[0] == "re" for item in drawing["items"])):
            bands += [(box.y0, box.y0 + 1), (box.y1 - 1, box.y1)]
            continue
        bands.append((box.y0, box.y1))
    return bands


def blank_share(page: pymupdf.Page) -> float:
    """The share of the page's height inside its margins that nothing drawn covers (gaps of 1 cm or more)."""
    top_margin, bottom_margin = page_margins_pt()
    top, bottom = top_margin, page.rect.height - bottom_margin
    bands = sorted((max(a, top), min(b, bottom)) for a, b in drawn_bands(page) if b > top and a < bottom)
    covered, run = 0.0, None
    for start, end in bands:
        if run and start - run[1] < GAP_PT:
            run[1] = max(run[1], end)
            continue
        if run:
            covered += run[1] - run[0]
        run = [start, end]
    if run:
        covered += run[1] - run[0]
    return 1 - covered / (bottom - top)


def spans(page: pymupdf.Page):
    """Every non-blank text span on the page, with its size in points, its box and its colour."""
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            for span in line["spans"]:
                if span["text"].strip():
                    yield span


def figure_boxes(pdf: pymupdf.Document) -> dict[int, dict[str, tuple[int, pymupdf.Rect]]]:
    """Each figure's marks: {n: {"S": (page number, box), "E": (page number, box)}}."""
    found: dict[int, dict[str, tuple[int, pymupdf.Rect]]] = {}
    for number, page in enumerate(pdf, start=1):
        for word in page.get_text("words"):
            if match := MARK.fullmatch(word[4]):
                corner, n = match[1], int(match[2])
                assert corner not in found.get(n, {}), f"figure {n}'s mark {corner} printed twice"
                found.setdefault(n, {})[corner] = (number, pymupdf.Rect(word[:4]))
    return found


def measure(pdf: pymupdf.Document, pictures: list[dict]) -> tuple[list[str], list[str], int]:
    """(pictures cut across pages, chart texts under 8 pt, texts measured) for a printed document."""
    marks = figure_boxes(pdf)
    printed = {picture["figure"] for picture in pictures if picture["n"] in marks}
    unprinted = {picture["name"] for picture in pictures if picture["figure"] not in printed}
    assert not unprinted, f"figures with no picture in the PDF: {sorted(unprinted)}"
    drawings: dict[int, list[str]] = {}
    for picture in pictures:
        if picture["variant"] and picture["n"] in marks:
            drawings.setdefault(picture["figure"], []).append(picture["name"])
    twice = [names for names in drawings.values() if len(names) > 1]
    assert not twice, f"charts printed in both their wide and their narrow drawing: {twice}"
    split, small, measured = [], [], 0
    for picture in pictures:
        n, name = picture["n"], picture["name"]
        corners = marks.get(n, {})
        if not corners:  # the drawing of the chart for another width: its figure's other one is printed
            continue
        assert set(corners) == {"S", "E"}, f"{name}: its marks {sorted(corners)} are not both in the PDF"
        (first, start), (last, end) = corners["S"], corners["E"]
        if first != last:
            split.append(f"{name} runs from page {first} to page {last}")
            continue
        box = pymupdf.Rect(start.x0, start.y0, end.x1, end.y1) + (-1, -1, 1, 1)
        for span in spans(pdf[first - 1]):
            inside = pymupdf.Rect(span["bbox"])
            if MARK.fullmatch(span["text"].strip()) or not box.contains((inside.tl + inside.br) * 0.5):
                continue
            measured += 1
            if span["size"] < SMALLEST_PT:
                small.append(f"page {first}, {name}: “{span['text'].strip()[:30]}” at {span['size']:.1f} pt")
    return split, small, measured


@pytest.fixture(scope="module")
def printed(live_server) -> dict[str, tuple[pymupdf.Document, dict]]:
    slugs = documents()
    subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "reaped.py"), "node",
                    str(REPO_ROOT / "tests" / "browser" / "print-pdf.mjs"), str(OUT), *slugs],
                   cwd=REPO_ROOT, env=dict(os.environ, BASE_URL=live_server), check=True, timeout=300)
    return {slug: (pymupdf.open(OUT / f"{slug}.pdf"), json.loads((OUT / f"{slug}.json").read_text()))
            for slug in slugs}


@pytest.mark.browser
@pytest.mark.xdist_group("print")  # one worker prints, into OUT: two would write the same files at once
@pytest.mark.parametrize("slug", documents())
def test_printed_figures_are_whole_and_their_text_at_least_8_pt(printed, slug):
    pdf, figures = printed[slug][0], printed[slug][1]["figures"]
    charts = [f for f in figures if f["svgTexts"]]
    assert len(charts) >= 2, f"{slug}: only {len(charts)} charts found to measure"
    split, small, measured = measure(pdf, figures)
    print(f"{slug}: {pdf.page_count} pages, {len(figures)} pictures, {measured} texts measured")
    assert measured >= sum(f["svgTexts"] for f in charts) // 2, f"{slug}: only {measured} texts found inside the figures"
    assert split == [], f"{slug}: {len(split)} pictures cut across pages:\n" + "\n".join(split)
    assert small == [], f"{slug}: {len(small)} chart texts under {SMALLEST_PT} pt:\n" + "\n".join(small[:40])


@pytest.mark.browser
@pytest.mark.xdist_group("print")
@pytest.mark.parametrize("slug", documents())
def test_no_printed_page_but_the_last_is_more_than_40_percent_blank(printed, slug):
    pdf = printed[slug][0]
    shares = [blank_share(page) for page in pdf]
    print(f"{slug}: {pdf.page_count} pages, blank share per page (%): "
          + " ".join(f"{share * 100:.0f}" for share in shares)
          + f"; most blank before the last: {max(shares[:-1]) * 100:.0f} %")
    blank = [f"page {number} is {share * 100:.0f} % blank; the next page begins “"
             + " ".join(pdf[number].get_text().split())[:70] + "”"
             for number, share in enumerate(shares[:-1], start=1) if share > MOST_BLANK]
    assert blank == [], f"{slug}: {len(blank)} pages more than {MOST_BLANK:.0%} blank:\n" + "\n".join(blank)


def test_the_blank_share_sees_an_empty_frame_and_a_half_empty_page_as_blank():
    """blank_share on pages drawn here: a page of text lines is not blank; the same lines on its upper
    half leave half of it blank; a frame around nothing, with a title, is blank inside."""
    top, bottom = page_margins_pt()
    pdf = pymupdf.open()
    height = 842 - top - bottom
    for lines in (height, height / 2):
        page = pdf.new_page(width=595, height=842)
        y = top + 12
        while y <= top + lines:
            page.insert_text((50, y), "A line of running text, drawn as a page draws it.", fontsize=11)
            y += 16
    frame = pdf.new_page(width=595, height=842)
    frame.draw_rect(pymupdf.Rect(45, top, 550, 842 - bottom), color=(0.6, 0.6, 0.6))
    frame.insert_text((60, top + 24), "Category bars: a title in an empty frame", fontsize=14)
    full, half, frame = pdf
    assert blank_share(full) < 0.05
    assert 0.45 < blank_share(half) < 0.55
    assert blank_share(frame) > 0.9


def disclosure_triangles(pdf: pymupdf.Document, summaries: list[str]) -> list[str]:
    """Each printed fold summary with a shape drawn just left of its words, on its line: the
    disclosure triangle a <details> shows on screen ("click to open", which paper cannot do)."""
    found = []
    for number, page in enumerate(pdf, start=1):
        drawings = [d["rect"] for d in page.get_drawings() if d.get("fill") and d["rect"].width < 12 and d["rect"].height < 12]
        for span in spans(page):
            words = span["text"].strip()
            if not any(words.startswith(summary) for summary in summaries):
                continue
            line = pymupdf.Rect(span["bbox"])
            if any(line.y0 - 2 <= box.y0 and box.y1 <= line.y1 + 2 and line.x0 - 20 <= box.x0 and box.x1 <= line.x0 + 1
                   for box in drawings):
                found.append(f"page {number}: “{words[:40]}”")
    return found


@pytest.mark.browser
@pytest.mark.xdist_group("print")
@pytest.mark.parametrize("slug", documents())
def test_folds_print_open_without_their_triangle(printed, slug):
    pdf, summaries = printed[slug][0], printed[slug][1]["summaries"]
    assert "More about this figure" in summaries, f"{slug}: the folds found to print: {summaries}"
    text = " ".join(" ".join(page.get_text().split()) for page in pdf)
    assert all(summary in text for summary in summaries), f"{slug}: a fold's summary is missing from the PDF"
    triangles = disclosure_triangles(pdf, summaries)
    assert triangles == [], f"{slug}: folds printed with their triangle:\n" + "\n".join(triangles)
