"""Human-readable times, sizes and output tails, shared by the CLI tables and the app's results
panel."""

from __future__ import annotations

import math


def fmt_seconds(s: float) -> str:
    if not isinstance(s, (int, float)) or math.isnan(s):
        return "?"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def fmt_bytes(n: float) -> str:
    if not isinstance(n, (int, float)):
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


OUTPUT_LINES = 40  # the tail of a program's output that the results panel and `tutor check` show
