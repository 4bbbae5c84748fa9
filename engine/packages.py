"""A package per widget for teachers, made by the static export (engine/export.py) from the files it
wrote, once per export (a download costs the host nothing but sending a file); the live site's are
made the same way, once per version of the site (engine/site_packages.py):

    packages/<document>/<widget>.zip          the widget alone, running from any static folder
    packages/<document>/<widget>-scorm12.zip  the same as a SCORM 1.2 package an LMS imports

Each holds the widget's embed page (``embed/<document>/<widget>.html``, as exported), what it loads
(the site's static files, the document's widget files, the runtime's index, Pyodide and the wheel)
and an ``index.html`` that opens it. The SCORM package adds ``imsmanifest.xml`` (one SCO: the embed
page) and loads ``static/js/widgets/scorm.js`` there, which reports the learner's first change
through the LMS's API (cmi.core.lesson_status "completed") and does nothing where there is none.

Only widgets the worker draws are packaged (a live widget asks the model; a widget the server
draws needs its data). The zips are written here, not with ``zipfile``: Pyodide's files (14 MiB,
in every package) are compressed once per export and their compressed bytes copied into each
package, and every entry has the same fixed time, so the same export gives the same bytes.
"""
from __future__ import annotations

import posixpath
import re
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

# The zip format's "no earlier than" time (1980-01-01 00:00): reproducible bytes.
_DOS_TIME, _DOS_DATE = 0, (0 << 9) | (1 << 5) | 1
SCORM_SCRIPT = "static/js/widgets/scorm.js"
# Where a widget's share box names its packages: filled in by the export, and on the live site each
# time the page is served ("<!--live-": engine/caching.py's finishers fill in such markers).
MARKER = "<!--live-packages:{slug}/{name}-->"
MARKER_PATTERN = re.compile(r"<!--live-packages:(?P<slug>[a-z0-9-]+)/(?P<name>[a-z0-9-]+)-->")
_SCHEMAS = ("http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd "
            "http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 imsmd_rootv1p2p1.xsd "
            "http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd")


_ADDRESS = re.compile(r"""(\s(?:href|src|action|data-[a-z-]+-url)=")([^"]*)(")""")
_TO_THE_DOCUMENT = re.compile(r"""<p class="embed-credit">.*?</p>\n?""", re.S)


@dataclass(frozen=True)
class _Entry:
    name: str
    crc: int
    size: int
    data: bytes  # raw deflate, or the bytes themselves when that is no smaller
    method: int  # 8 deflate, 0 stored


# Entries compressed so far, by (name, CRC-32, size): Pyodide's files are compressed once per
# process, however many exports it makes (the tests make several).
_COMPRESSED: dict[tuple[str, int, int], _Entry] = {}


def _entry(name: str, data: bytes) -> _Entry:
    key = (name, zlib.crc32(data), len(data))
    if key not in _COMPRESSED:
        _COMPRESSED[key] = _compressed(name, data)
    return _COMPRESSED[key]


def _compressed(name: str, data: bytes) -> _Entry:
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    packed = packer.compress(data) + packer.flush()
    if len(packed) < len(data):
        return _Entry(name, zlib.crc32(data), len(data), packed, 8)
    return _Entry(name, zlib.crc32(data), len(data), data, 0)


def _zip(entries: list[_Entry]) -> bytes:
    """A zip archive of ``entries`` (names sorted by the caller), no extra fields, fixed times."""
    body, central = bytearray(), bytearray()
    for entry in entries:
        name = entry.name.encode()
        offset = len(body)
        fields = (20, 0x0800, entry.method, _DOS_TIME, _DOS_DATE, entry.crc, len(entry.data), entry.size, len(name))
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, 0) + name + entry.data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0, 0, offset) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(body), 0)
    return bytes(body + central + end)


def fill_markers(text: str, links: Callable[[str, str], str]) -> str:
    """Each widget's marker in ``text`` replaced by ``links(document, widget)``."""
    return MARKER_PATTERN.sub(lambda match: links(match["slug"], match["name"]), text)


def packaged_widgets(documents: dict, chosen: list[str] | None = None) -> dict[str, list[tuple[str, str]]]:
    """{document: [(widget, title)]} of the widgets packaged: those the worker draws, all of them or
    the ``chosen`` ("document/widget"; a name that is no such widget raises ValueError)."""
    every = {f"{slug}/{name}": (slug, name, widget.title) for slug, document in documents.items()
             for name, widget in document.widgets.items() if widget.driver == "worker"}
    unknown = sorted(set(chosen or ()) - set(every))
    if unknown:
        raise ValueError(f"no widget the worker draws is named {', '.join(unknown)} (document/widget: {', '.join(every)})")
    found: dict[str, list[tuple[str, str]]] = {}
    for key, (slug, name, title) in every.items():
        if chosen is None or key in chosen:
            found.setdefault(slug, []).append((name, title))
    return found


def _launcher(embed: str, title: str) -> bytes:
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="0; url={escape(embed)}">
<title>{escape(title)}</title>
</head>
<body>
<p><a href="{escape(embed)}">{escape(title)}</a></p>
</body>
</html>
""".encode()


def _manifest(slug: str, name: str, title: str, launch: str, files: list[str]) -> bytes:
    resources = "\n".join(f'        <file href="{escape(f)}"/>' for f in files)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="annotated-papers-{slug}-{name}" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="{_SCHEMAS}">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
  </metadata>
  <organizations default="course">
    <organization identifier="course">
      <title>{escape(title)}</title>
      <item identifier="widget" identifierref="widget-resource">
        <title>{escape(title)}</title>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="widget-resource" type="webcontent" adlcp:scormtype="sco" href="{escape(launch)}">
{resources}
    </resource>
  </resources>
</manifest>
""".encode()


def _self_contained(page: str, embed: str, inside: set[str], base_url: str | None) -> str:
    """The embed page as its package holds it: an address of a page the package does not hold (the
    widget's page in the document: links, the settings form's action) names the export's own copy where its address is known
    (``base_url``), else this page itself; the paragraph that sends the reader to the document
    ("Open this view in the document") is left out without an address."""
    here = posixpath.dirname(embed)

    def outside(match: re.Match) -> str:
        value = match.group(2)
        target = posixpath.normpath(posixpath.join(here, value.split("#")[0].split("?")[0]))
        if "://" in value or not target.endswith(".html") or target in inside:
            return match.group(0)
        replaced = base_url + target if base_url else posixpath.basename(embed)
        return match.group(1) + replaced + value[len(value.split("?")[0].split("#")[0]):] + match.group(3)

    page = _ADDRESS.sub(outside, page)
    if not base_url:
        page = _TO_THE_DOCUMENT.sub("", page)
    return page


def write_packages(folder: Path, widgets: dict[str, list[tuple[str, str]]],
                   base_url: str | None = None) -> dict[tuple[str, str], dict[str, tuple[str, int]]]:
    """Write both packages of each widget (``widgets``: {document: [(name, title)]}) from the
    exported ``folder`` (whose address is ``base_url``, if known); returns {(document, name):
    {"zip"|"scorm": (file in the folder, bytes)}}."""
    shared_names = sorted(str(p.relative_to(folder)) for top in ("static", "pyodide", "wheels")
                          for p in (folder / top).rglob("*") if p.is_file())
    shared = [_entry(name, (folder / name).read_bytes()) for name in [*shared_names, "api/python-runtime"]]
    made = {}
    for slug, names in widgets.items():
        assets = [_entry(str(p.relative_to(folder)), p.read_bytes())
                  for p in sorted((folder / slug / "assets").glob("*")) if p.is_file()]
        for name, title in names:
            embed = f"embed/{slug}/{name}.html"
            page = (folder / embed).read_text(encoding="utf-8").replace(MARKER.format(slug=slug, name=name), "")
            page = _self_contained(page, embed, {embed, "index.html"}, base_url)
            scorm_page = page.replace("</body>", f'<script type="module" src="../../{SCORM_SCRIPT}"></script>\n</body>')
            common = [*shared, *assets, _entry("index.html", _launcher(embed, title))]
            plain = sorted([*common, _entry(embed, page.encode())], key=lambda e: e.name)
            scorm = [*common, _entry(embed, scorm_page.encode())]
            files = sorted(e.name for e in scorm)
            scorm.append(_entry("imsmanifest.xml", _manifest(slug, name, title, embed, files)))
            made[(slug, name)] = {}
            for kind, entries, file in (("zip", plain, f"packages/{slug}/{name}.zip"),
                                        ("scorm", sorted(scorm, key=lambda e: e.name), f"packages/{slug}/{name}-scorm12.zip")):
                data = _zip(entries)
                (folder / file).parent.mkdir(parents=True, exist_ok=True)
                (folder / file).write_bytes(data)
                made[(slug, name)][kind] = (file, len(data))
    return made
