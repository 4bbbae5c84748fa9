"""A percentage axis over part of the 0–100 % range (widgetkit's percent_axis_x always spans all of it)."""
from __future__ import annotations

from widgetkit.scene import Linear, hline, label, vline


def percent_axis_part(scale: Linear, y: float, low: int, high: int, step: int) -> list[dict]:
    """A horizontal axis from low % to high % with a tick every step %."""
    marks = [hline(scale(low / 100), scale(high / 100), y, "fig-axis")]
    for tick in range(low, high + 1, step):
        x = scale(tick / 100)
        marks += [vline(x, y, y + 5, "fig-axis"), label(x, y + 18, f"{tick}%", "fig-tick")]
    return marks
