"""Typing statistics per chapter, for `tutor stats`. Plain Python (rich only): no Textual, no torch.

Accuracy is a fraction (0..1) as stored by the type-along widget; WPM is net WPM
(see `tutor/typing_engine.py` for the definitions).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean

from rich.table import Table

from tutor.course import Course
from tutor.progress import Progress, TypingRecord

RECENT = 5  # "recent" figures average the chapter's last few attempts: one attempt is noisy


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
        rows.append(ChapterStats(
            number=chapter.number, slug=chapter.slug, title=chapter.title,
            done=sum(k in done for k in keys), total=len(keys), attempts=len(records),
            best_wpm=max((r.wpm for r in records), default=None),
            best_accuracy=max((r.accuracy for r in records), default=None),
            recent_wpm=fmean(r.wpm for r in recent) if recent else None,
            recent_accuracy=fmean(r.accuracy for r in recent) if recent else None,
        ))
    return rows


def _wpm(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def render_stats(rows: list[ChapterStats]) -> Table:
    table = Table(title="Type-along", title_justify="left")
    table.add_column("#", justify="right", style="dim")
    table.add_column("Chapter")
    table.add_column("Passages", justify="right")
    table.add_column("Best WPM", justify="right")
    table.add_column("Recent WPM", justify="right")
    table.add_column("Best acc.", justify="right")
    table.add_column("Recent acc.", justify="right")
    for r in rows:
        passages = f"{r.done}/{r.total}" if r.total else "—"
        table.add_row(str(r.number), r.title, passages, _wpm(r.best_wpm), _wpm(r.recent_wpm),
                      _pct(r.best_accuracy), _pct(r.recent_accuracy))
    return table
