"""A small terminal plot of a memory figure's timeline: live tensor memory over time, the
learner's line beside the reference's (no torch here: the runner sends plain numbers).

The figure is the dict a checker's `ctx.memory` reports, with
`"timeline": {"learner": [[t_s, bytes], ...], "reference": [...]}`.
"""

from __future__ import annotations

import math
from typing import Any

from textual_plotext import PlotextPlot

from tutor.i18n import N_, _

PLOT_HEIGHT = 14  # rows: enough for the shape, small enough to sit under the figures
# The two lines, named as the figure's rows are (the checker's `sides` when it gave them).
_SIDES = (("learner", N_("yours"), "green"), ("reference", N_("reference"), "blue"))
_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1))


def unit_for(biggest: float) -> tuple[str, float]:
    """The largest binary unit in which `biggest` is at least 1 (bytes below 1 KiB)."""
    for name, size in _UNITS:
        if biggest >= size:
            return name, float(size)
    return "B", 1.0


def series(figure: dict[str, Any]) -> tuple[list[tuple[str, str, list[float], list[float]]], str, str]:
    """([(label, color, times, values)], time unit, memory unit) for the plot; sides without
    points, and points that are not two finite numbers, are left out. The labels are the
    figure's `sides` when it has them, else yours and the reference."""
    sides = figure.get("sides")
    named = (
        [s.strip() for s in sides]
        if isinstance(sides, (list, tuple)) and len(sides) == 2 and all(isinstance(s, str) and s.strip() for s in sides)
        else [_(label) for _key, label, _color in _SIDES]
    )
    timeline = figure.get("timeline")
    if not isinstance(timeline, dict):
        return [], "s", "B"
    clean: dict[str, list[tuple[float, float]]] = {}
    for key, _label, _color in _SIDES:
        points = timeline.get(key)
        good = [
            (float(p[0]), float(p[1]))
            for p in points or []
            if isinstance(p, (list, tuple))
            and len(p) == 2
            and all(isinstance(v, (int, float)) and math.isfinite(v) for v in p)
        ]
        if good:
            clean[key] = good
    if not clean:
        return [], "s", "B"
    longest = max(t for pts in clean.values() for t, _b in pts)
    t_unit, t_scale = ("ms", 1e3) if longest < 1 else ("s", 1.0)
    m_unit, m_scale = unit_for(max(b for pts in clean.values() for _t, b in pts))
    out = [
        (label, color, [t * t_scale for t, _b in clean[key]], [b / m_scale for _t, b in clean[key]])
        for (key, _default, color), label in zip(_SIDES, named)
        if key in clean
    ]
    return out, t_unit, m_unit


class MemoryPlot(PlotextPlot):
    """Live tensor memory over one call of each side, as step lines."""

    def __init__(self, label: str, figure: dict[str, Any], *, id: str | None = None) -> None:
        super().__init__(id=id, classes="memory-plot")
        self.label = label
        self.figure = figure
        self.styles.height = PLOT_HEIGHT

    def on_mount(self) -> None:
        lines, t_unit, m_unit = series(self.figure)
        plt = self.plt
        plt.clear_data()
        for label, color, xs, ys in lines:
            # Memory stays at its level until the next allocation or free: draw steps.
            sx, sy = _steps(xs, ys)
            plt.plot(sx, sy, label=label, color=color, marker="braille")
        top = max((y for _l, _c, _x, ys in lines for y in ys), default=0.0)
        plt.ylim(0, top if top > 0 else 1)  # memory is never negative: the axis starts at 0
        plt.title(_("{label}: live tensor memory during one call", label=self.label))
        plt.xlabel(t_unit)
        plt.ylabel(m_unit)
        self.refresh()


def _steps(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    sx: list[float] = []
    sy: list[float] = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if i:
            sx.append(x)
            sy.append(ys[i - 1])
        sx.append(x)
        sy.append(y)
    return sx, sy
