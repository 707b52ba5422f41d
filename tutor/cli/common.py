"""What every `tutor` command shares: the consoles, exit codes, `UsageError`, the progress
store opened with its notice said, and the exercise and chapter arguments."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

from rich.console import Console

from tutor.course import Course, Exercise
from tutor.i18n import N_, _
from tutor.progress import Progress, ProgressError
from tutor.session import LearnerSession

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def remembered_language(home: Path) -> str | None:
    """The language chosen in the app last time, if a progress database exists."""
    if not (home / "progress.sqlite3").exists():
        return None
    try:
        progress = Progress(home)
    except ProgressError:
        return None
    if progress.notice:  # damage found on this first open: say so now, it is not seen again
        err_console.print(f"tutor: {progress.notice}", markup=False)
    try:
        return progress.get_state("lang")
    except ProgressError:
        return None


def open_progress(home: Path) -> Progress:
    progress = Progress(home)
    if progress.notice:
        err_console.print(f"tutor: {progress.notice}", markup=False)
    return progress


def warn(text: str) -> None:
    """One line on stderr (so `--json` stays parseable); the command goes on."""
    err_console.print("tutor: " + _("warning:") + " " + text, markup=False)


def progress_if_possible(home: Path) -> Progress | None:
    """The progress store, or None (said in one line) when it cannot be opened: a full disk or
    a read-only home must not stop a check from giving its verdict."""
    try:
        return open_progress(home)
    except ProgressError as exc:
        warn(_("progress will not be saved: {why}", why=exc))
        return None


def is_chapter(words: Sequence[str]) -> bool:
    """`chapter N`, `ch N` or a bare number: a chapter, not an exercise id."""
    return bool(words) and (words[0].lower() in ("chapter", "ch") or (len(words) == 1 and words[0].isdigit()))


def parse_chapter(words: Sequence[str], course: Course) -> int | None:
    """`chapter 3`, `3`, or nothing (None). Raises UsageError naming the valid choices."""
    words = list(words)
    if words and words[0].lower() in ("chapter", "ch"):
        words = words[1:]
        if not words:
            raise UsageError(_("which chapter? choose {choices}", choices=chapter_range(course)))
    if not words:
        return None
    if len(words) > 1:
        raise UsageError(_("expected one chapter number, got {got}", got=repr(" ".join(words))))
    try:
        number = int(words[0])
    except ValueError:
        raise UsageError(
            _("{got} is not a chapter number; choose {choices}", got=repr(words[0]), choices=chapter_range(course))
        ) from None
    if number not in {c.number for c in course.chapters}:
        raise UsageError(
            _("there is no chapter {number}; choose {choices}", number=number, choices=chapter_range(course))
        )
    return number


def chapter_range(course: Course) -> str:
    nums = sorted(c.number for c in course.chapters)
    return f"{nums[0]}-{nums[-1]}" if nums == list(range(nums[0], nums[-1] + 1)) else ", ".join(map(str, nums))


def find_exercise(course: Course, ident: str) -> Exercise:
    try:
        return course.exercise(ident)
    except KeyError:
        import difflib

        close = difflib.get_close_matches(ident, course.exercise_ids(), n=3, cutoff=0.6)
        if close:
            raise UsageError(
                _(
                    "unknown exercise {name}; did you mean {close}? (`tutor list` shows them all)",
                    name=repr(ident),
                    close=" / ".join(close),
                )
            ) from None
        raise UsageError(
            _("unknown exercise {name}; `tutor list` shows the exercises of every chapter", name=repr(ident))
        ) from None


def exercise_arg(course: Course, ident: str | None, progress: Progress | None) -> Exercise:
    """The named exercise, or the one the learner is on (as `tutor check` with no argument)."""
    if ident:
        return find_exercise(course, ident)
    return LearnerSession(course, progress).current_exercise()


def ago(ts: float | None) -> str:
    if not ts:
        return "—"
    delta = time.time() - ts
    for unit, size in ((N_("{n}d ago"), 86400), (N_("{n}h ago"), 3600), (N_("{n}m ago"), 60)):
        if delta >= size:
            return _(unit, n=int(delta // size))
    return _("just now")
