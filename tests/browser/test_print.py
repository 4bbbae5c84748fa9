"""Printed documents, measured from the PDF Chromium prints (A4, as a reader's "Print" makes it).

tests/browser/print-pdf.mjs prints each document and marks each figure's top-left and bottom-right
corners with invisible text ("PDFMARK-S-<n>", "PDFMARK-E-<n>"). Here PyMuPDF reads the PDF: both
marks of a figure must be on one page (a figure is never split across pages), and every piece of
text inside the box they span, the chart's axis labels, keys and captions, must be at least 8 pt.
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


def measure(pdf: pymupdf.Document, figures: list[dict]) -> tuple[list[str], list[str], int]:
    """(split figures, chart texts under 8 pt, texts measured) for a printed document."""
    marks = figure_boxes(pdf)
    split, small, measured = [], [], 0
    for figure in figures:
        n, name = figure["n"], figure["name"]
        corners = marks.get(n, {})
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
def printed(live_server) -> dict[str, tuple[pymupdf.Document, list[dict]]]:
    slugs = documents()
    subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "reaped.py"), "node",
                    str(REPO_ROOT / "tests" / "browser" / "print-pdf.mjs"), str(OUT), *slugs],
                   cwd=REPO_ROOT, env=dict(os.environ, BASE_URL=live_server), check=True, timeout=300)
    return {slug: (pymupdf.open(OUT / f"{slug}.pdf"), json.loads((OUT / f"{slug}.json").read_text())["figures"])
            for slug in slugs}


@pytest.mark.browser
@pytest.mark.xdist_group("print")  # one worker prints, into OUT: two would write the same files at once
@pytest.mark.parametrize("slug", documents())
def test_printed_figures_are_whole_and_their_text_at_least_8_pt(printed, slug):
    pdf, figures = printed[slug]
    charts = [f for f in figures if f["svgTexts"]]
    assert len(charts) >= 2, f"{slug}: only {len(charts)} charts found to measure"
    split, small, measured = measure(pdf, figures)
    print(f"{slug}: {pdf.page_count} pages, {len(figures)} figures, {measured} texts measured")
    assert measured >= sum(f["svgTexts"] for f in charts) // 2, f"{slug}: only {measured} texts found inside the figures"
    assert split == [], f"{slug}: {len(split)} figures split across pages:\n" + "\n".join(split)
    assert small == [], f"{slug}: {len(small)} chart texts under {SMALLEST_PT} pt:\n" + "\n".join(small[:40])
