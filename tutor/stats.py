"""Typing statistics per chapter, for `tutor stats`. Plain Python (rich only): no Textual, no torch.

Accuracy is a fraction (0..1) as stored by the type-along widget, shown rounded down
(`format_accuracy`); WPM is net WPM (see `tutor/typing_engine.py` for the definitions).
`history_lines` draws one passage's attempts for the type-along results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from rich.cells import cell_len
from rich.table import Table

from tutor.course import Course
from tutor.i18n import _
from tutor.progress import Progress, TypingRecord
from tutor.typing_engine import format_accuracy

RECENT = 5  # "recent" figures average the chapter's last few attempts: one attempt is noisy
CHART_FROM = 3  # fewer attempts read better as numbers than as a chart
CHART_WIDTH = 24  # attempts drawn in a history sparkline (the most recent ones)
_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], low: float | None = None, high: float | None = None) -> str:
    """One character per value, scaled between `low` and `high` (default: the smallest and the
    largest value); a flat series is drawn at mid height rather than as full blocks."""
    if not values:
        return ""
    low = min(values) if low is None else min(low, *values)
    high = max(values) if high is None else max(high, *values)
    if high - low < 1e-9:
        return _BARS[3] * len(values)
    top = len(_BARS) - 1
    return "".join(_BARS[round((v - low) / (high - low) * top)] for v in values)


def history_lines(history: Sequence[TypingRecord]) -> list[str]:
    """A passage's attempts, oldest first: numbers below CHART_FROM attempts, then sparklines
    of net WPM and accuracy over the last CHART_WIDTH attempts."""
    if not history:
        return []
    if len(history) < CHART_FROM:
        return [
            _("Attempt {i}: {wpm} WPM · accuracy {acc}", i=i, wpm=f"{r.wpm:.0f}", acc=format_accuracy(r.accuracy))
            for i, r in enumerate(history, 1)
        ]
    shown = history[-CHART_WIDTH:]
    first, last = shown[0], shown[-1]
    span = " " + _("(last {n} of {total})", n=len(shown), total=len(history)) if len(shown) < len(history) else ""
    # The two labels padded to the same cells (a Chinese label is two cells a character).
    wpm, acc = "WPM", _("accuracy")
    pad = max(cell_len(wpm), cell_len(acc)) + 2
    return [
        # WPM from 0 and accuracy from 80%, so that 98% against 100% is not drawn as a cliff.
        (
            f"{wpm}{' ' * (pad - cell_len(wpm))}{sparkline([r.wpm for r in shown], low=0)}  "
            f"{first.wpm:.0f} → {last.wpm:.0f}{span}"
        ),
        (
            f"{acc}{' ' * (pad - cell_len(acc))}{sparkline([r.accuracy for r in shown], low=0.8, high=1.0)}  "
            f"{format_accuracy(first.accuracy)} → {format_accuracy(last.accuracy)}"
        ),
    ]


@dataclass(frozen=True)
class ChapterStats:
    number: int
    slug: str
    title: str
    done: int  # passages typed to the end at least once
    total: int  # passages in the chapter
    attempts: int
    best_wpm: float | None  # None: no attempt yet
    best_accuracy: float | None
    recent_wpm: float | None  # mean of the last RECENT attempts
    recent_accuracy: float | None


def summarize(progress: Progress, course: Course) -> list[ChapterStats]:
    """One row per chapter, in course order (chapters without passages too, as 0/0)."""
    done = progress.passages_done()
    by_passage: dict[str, list[TypingRecord]] = {}
    for rec in progress.typing_history():  # one query, ordered by time
        by_passage.setdefault(rec.passage, []).append(rec)
    rows = []
    for chapter in course.chapters:
        keys = [p.key for p in chapter.passages]
        records = sorted((r for k in keys for r in by_passage.get(k, [])), key=lambda r: r.at)
        recent = records[-RECENT:]
        rows.append(
            ChapterStats(
                number=chapter.number,
                slug=chapter.slug,
                title=chapter.title,
                done=sum(k in done for k in keys),
                total=len(keys),
                attempts=len(records),
                best_wpm=max((r.wpm for r in records), default=None),
                best_accuracy=max((r.accuracy for r in records), default=None),
                recent_wpm=fmean(r.wpm for r in recent) if recent else None,
                recent_accuracy=fmean(r.accuracy for r in recent) if recent else None,
            )
        )
    return rows


def _wpm(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else format_accuracy(value)


def render_stats(rows: list[ChapterStats]) -> Table:
    table = Table(title=_("Type-along"), title_justify="left")
    table.add_column("#", justify="right", style="dim")
    table.add_column(_("Chapter"))
    table.add_column(_("Passages"), justify="right")
    table.add_column(_("Best WPM"), justify="right")
    table.add_column(_("Recent WPM"), justify="right")
    table.add_column(_("Best acc."), justify="right")
    table.add_column(_("Recent acc."), justify="right")
    for r in rows:
        passages = f"{r.done}/{r.total}" if r.total else "—"
        table.add_row(
            str(r.number),
            r.title,
            passages,
            _wpm(r.best_wpm),
            _wpm(r.recent_wpm),
            _pct(r.best_accuracy),
            _pct(r.recent_accuracy),
        )
    return table
