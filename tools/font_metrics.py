"""Write widgetkit/metrics.py: the advance widths of DejaVu Sans, regular and bold.

The widgets lay their text out in Python (widgetkit.layout), so Python must know how wide a line
will be. The figures ask for system-ui, then DejaVu Sans; DejaVu Sans is what Debian's Chromium
draws them with, and it is wider than the system fonts of other platforms (Segoe UI, San
Francisco, Roboto), so a line measured with it fits wherever it is drawn.

    python3 -m tools.font_metrics [--fonts /usr/share/fonts/truetype/dejavu] > widgetkit/metrics.py

Reads each font's head, hhea, hmtx and cmap (format 4) tables with the standard library.
"""
from __future__ import annotations

import argparse
import struct
from pathlib import Path

# Printable ASCII and the other characters the widgets' words use (en dash, minus, quotes, …).
CHARACTERS = "".join(chr(code) for code in range(32, 127)) + "§“”‘’±–—−→…×≈≤≥·°é"


def _tables(data: bytes) -> dict[str, int]:
    count = struct.unpack(">H", data[4:6])[0]
    found = {}
    for i in range(count):
        tag, _, offset, _ = struct.unpack(">4sIII", data[12 + 16 * i:28 + 16 * i])
        found[tag.decode("ascii")] = offset
    return found


def _glyph_index(data: bytes, cmap: int):
    """The font's Unicode (platform 3, encoding 1) format-4 character map as a function."""
    subtables = struct.unpack(">H", data[cmap + 2:cmap + 4])[0]
    start = None
    for i in range(subtables):
        platform, encoding, offset = struct.unpack(">HHI", data[cmap + 4 + 8 * i:cmap + 12 + 8 * i])
        if (platform, encoding) == (3, 1):
            start = cmap + offset
    if start is None or struct.unpack(">H", data[start:start + 2])[0] != 4:
        raise ValueError("the font has no Unicode format-4 cmap")
    twice = struct.unpack(">H", data[start + 6:start + 8])[0]
    segments = twice // 2
    ends = struct.unpack(f">{segments}H", data[start + 14:start + 14 + twice])
    starts = struct.unpack(f">{segments}H", data[start + 16 + twice:start + 16 + 2 * twice])
    deltas = struct.unpack(f">{segments}h", data[start + 16 + 2 * twice:start + 16 + 3 * twice])
    ranges_at = start + 16 + 3 * twice
    range_offsets = struct.unpack(f">{segments}H", data[ranges_at:ranges_at + twice])

    def index(code: int) -> int:
        for i in range(segments):
            if starts[i] <= code <= ends[i]:
                if range_offsets[i] == 0:
                    return (code + deltas[i]) & 0xFFFF
                at = ranges_at + 2 * i + range_offsets[i] + 2 * (code - starts[i])
                glyph = struct.unpack(">H", data[at:at + 2])[0]
                return (glyph + deltas[i]) & 0xFFFF if glyph else 0
        return 0

    return index


def font_metrics(path: Path) -> dict:
    """{"em": units per em, "ascent", "descent", "widths": {character: advance}} of one font."""
    data = path.read_bytes()
    tables = _tables(data)
    em = struct.unpack(">H", data[tables["head"] + 18:tables["head"] + 20])[0]
    hhea = tables["hhea"]
    ascent, descent = struct.unpack(">hh", data[hhea + 4:hhea + 8])
    metrics = struct.unpack(">H", data[hhea + 34:hhea + 36])[0]
    hmtx = tables["hmtx"]
    advances = [struct.unpack(">H", data[hmtx + 4 * i:hmtx + 4 * i + 2])[0] for i in range(metrics)]
    index = _glyph_index(data, tables["cmap"])
    widths = {}
    for character in CHARACTERS:
        glyph = index(ord(character))
        if glyph == 0:
            raise ValueError(f"{path.name} has no glyph for {character!r}")
        widths[character] = advances[min(glyph, metrics - 1)]
    return {"em": em, "ascent": ascent, "descent": -descent, "widths": widths}


def module_text(regular: dict, bold: dict) -> str:
    """widgetkit/metrics.py's source: widths in thousandths of an em, rounded up."""
    def thousandths(units: int, em: int) -> int:
        return -(-units * 1000 // em)

    def table(font: dict) -> str:
        return "".join(f"    {c!r}: {thousandths(w, font['em'])},\n" for c, w in font["widths"].items())

    return (
        '"""Advance widths of DejaVu Sans (regular and bold) in thousandths of an em.\n\n'
        "Written by tools/font_metrics.py from the fonts' own tables; do not edit by hand.\n"
        '"""\n\n'
        f"ASCENT = {regular['ascent'] / regular['em']:.4f}  # above the baseline, in ems\n"
        f"DESCENT = {regular['descent'] / regular['em']:.4f}  # below it\n\n"
        f"REGULAR = {{\n{table(regular)}}}\n\n"
        f"BOLD = {{\n{table(bold)}}}\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fonts", type=Path, default=Path("/usr/share/fonts/truetype/dejavu"))
    args = parser.parse_args(argv)
    print(module_text(font_metrics(args.fonts / "DejaVuSans.ttf"), font_metrics(args.fonts / "DejaVuSans-Bold.ttf")), end="")


if __name__ == "__main__":
    main()
