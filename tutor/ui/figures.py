"""Formatting a verdict's figures: times, bytes and side-by-side bars. Plain Rich, no Textual."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from tutor.units import fmt_bytes, fmt_seconds

BAR_WIDTH = 16
_EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(value: float, biggest: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar, `width` cells for `biggest`, in eighths of a cell."""
    if biggest <= 0 or value <= 0 or not math.isfinite(value):
        return ""
    eighths = max(1, round(min(value / biggest, 1.0) * width * 8))  # non-zero stays visible
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def _table() -> Table:
    """Fixed column widths so every figure's rows line up, and fit a 40-column pane."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, width=8, overflow="ellipsis")  # what
    table.add_column(no_wrap=True, width=3, style="dim")          # you / ref
    table.add_column(no_wrap=True, width=10, justify="right")     # value
    table.add_column(no_wrap=True, width=BAR_WIDTH, overflow="crop")
    return table


def _pair(label: str, mine: Any, ref: Any, fmt: Any, mine_style: str) -> Table:
    """The learner's value and the reference's, bars on one scale."""
    numbers = all(isinstance(v, (int, float)) for v in (mine, ref))
    biggest = max(mine, ref) if numbers else 0
    table = _table()
    table.add_row(label, "you", fmt(mine), Text(bar(mine, biggest) if numbers else "", style=mine_style))
    table.add_row("", "ref", fmt(ref), Text(bar(ref, biggest) if numbers else "", style="dim"))
    return table


def figures_view(figures: dict[str, Any]) -> Group | None:
    """Timing, memory, build figures and any other numbers the checker reported."""
    if not figures:
        return None
    parts: list[Any] = []
    others = _table()
    for name, value in figures.items():
        label = name.replace("_", " ")
        if isinstance(value, dict) and "learner_s" in value and "reference_s" in value:
            speedup = value.get("speedup")
            fine = isinstance(speedup, (int, float)) and math.isfinite(speedup)
            parts.append(_pair(label, value["learner_s"], value["reference_s"], fmt_seconds,
                               "green" if fine and speedup >= 1 else "yellow"))
            note = f"speedup {speedup:.2f}× (>1: yours is faster)" if fine else ""
            if value.get("noisy"):
                note += "  noisy timing: re-run before trusting it"
            if note:
                parts.append(Text("   " + note.strip(), style="italic"))
        elif isinstance(value, dict) and "learner_bytes" in value and "reference_bytes" in value:
            mine, ref = value["learner_bytes"], value["reference_bytes"]
            parts.append(_pair(label, mine, ref, fmt_bytes,
                               "green" if isinstance(mine, (int, float)) and mine <= ref else "yellow"))
            if isinstance(mine, (int, float)) and isinstance(ref, (int, float)) and ref:
                parts.append(Text(f"   peak memory {mine / ref:.2f}× the reference's", style="italic"))
        elif name.endswith("_s") and isinstance(value, (int, float)):
            others.add_row(name[:-2].replace("_", " "), "", fmt_seconds(value), "")
        elif isinstance(value, dict):
            others.add_row(label, "", ", ".join(f"{k}={_num(v)}" for k, v in value.items()), "")
        else:
            others.add_row(label, "", _num(value), "")
    if others.row_count:
        parts.append(others)
    return Group(*parts)


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
