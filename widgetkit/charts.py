"""Charts more than one paper draws, built from the scene builder (scene.py)."""
from __future__ import annotations

from .scene import Linear, figure, hline, label, rect, vline


def subject_delta_chart(rows: list[dict], delta: float, band: float, multiple: float, verdict: str) -> dict:
    """Per-subject deltas (candidate minus production), sorted, with the overall delta and its band
    of ± ``band`` (``multiple`` clustered standard errors). ``rows``: {"subject", "delta", "n"}, sorted."""
    extent = max(0.05, max(abs(r["delta"]) for r in rows), abs(delta) + band)
    y = Linear((-extent, extent), (230, 20))
    left, right = 64, 550
    digits = 0 if extent >= 0.1 else 1
    step = (right - left) / len(rows)
    marks = [rect(left, right, y(delta - band), y(delta + band), "fig-band-gate",
                  f"Delta ± {multiple:g} clustered standard errors")]
    for tick in (-extent, -extent / 2, 0, extent / 2, extent):
        marks.append(hline(left - 5, left, y(tick), "fig-axis"))
        marks.append(label(left - 8, y(tick) + 5, f"{tick * 100:+.{digits}f}" if tick else "0", "fig-tick", "end"))
    for i, row in enumerate(rows):
        x0 = left + i * step + 1
        marks.append(rect(x0, x0 + max(step - 2, 1), y(0), y(row["delta"]),
                          "fig-bar-down" if row["delta"] < 0 else "fig-bar-up",
                          f"{row['subject'].replace('_', ' ')}: {row['delta'] * 100:+.1f} points over {row['n']} questions"))
    marks += [
        vline(left, 20, 230, "fig-axis"),
        hline(left, right, y(0), "fig-axis"),
        hline(left, right, y(delta), "fig-ref fig-delta"),
        label(right - 4, y(delta) - 6, f"delta {delta * 100:+.2f}", "fig-ref-label", "end"),
        label(left, 250, "subjects, sorted by their change (points, candidate minus production)", "fig-caption", "start"),
    ]
    return figure(560, 260, f"Per-subject deltas sorted, with the clustered band; verdict {verdict}", marks)
