"""Charts more than one paper draws, built from the scene builder (scene.py)."""
from __future__ import annotations

from .layout import GAP, text_width
from .scene import Linear, caption, figure, hline, label, legend, rect, vline


def subject_delta_chart(rows: list[dict], delta: float, band: float, multiple: float, verdict: str,
                        width: int, band_label: str | None = None) -> dict:
    """Per-subject deltas (candidate minus production), sorted, with the overall delta and its band
    of ± ``band`` (``multiple`` clustered standard errors, or what ``band_label`` says), drawn
    ``width`` wide. ``rows``: {"subject", "delta", "n"}, sorted. The delta and the band are named
    in a key above the plot, where no bar can run into their words."""
    band_label = band_label or f"± {multiple:g} clustered standard errors"
    extent = max(0.05, max(abs(r["delta"]) for r in rows), abs(delta) + band)
    digits = 0 if extent >= 0.1 else 1
    tick_values = (-extent, -extent / 2, 0, extent / 2, extent)
    tick_texts = [f"{tick * 100:+.{digits}f}" if tick else "0" for tick in tick_values]
    marks, top = legend([("line", "fig-ref fig-delta", f"delta {delta * 100:+.2f}"),
                         ("box", "fig-band-gate", band_label)],
                        GAP, GAP, width - 2 * GAP)
    plot_top, plot_bottom = top + 10, top + 220
    y = Linear((-extent, extent), (plot_bottom, plot_top))
    left, right = GAP + max(text_width(t) for t in tick_texts) + 8, width - GAP
    step = (right - left) / len(rows)
    marks.append(rect(left, right, y(delta - band), y(delta + band), "fig-band-gate",
                      f"Delta {band_label}"))
    for tick, text in zip(tick_values, tick_texts, strict=True):
        marks.append(hline(left - 5, left, y(tick), "fig-axis"))
        marks.append(label(left - 8, y(tick) + 4, text, "fig-tick", "end"))
    for i, row in enumerate(rows):
        x0 = left + i * step + min(1, step / 4)
        marks.append(rect(x0, x0 + max(step - 2 * min(1, step / 4), 0.5), y(0), y(row["delta"]),
                          "fig-bar-down" if row["delta"] < 0 else "fig-bar-up",
                          f"{row['subject'].replace('_', ' ')}: {row['delta'] * 100:+.1f} points over {row['n']} questions"))
    marks += [
        vline(left, plot_top, plot_bottom, "fig-axis"),
        hline(left, right, y(0), "fig-axis"),
        hline(left, right, y(delta), "fig-ref fig-delta"),
    ]
    words, bottom = caption(left, plot_bottom + 8, width - left - GAP,
                            "subjects, sorted by their change (points, candidate minus production)", "start")
    return figure(width, round(bottom + GAP), f"Per-subject deltas sorted, with the gate's band; verdict {verdict}",
                  marks + words)
