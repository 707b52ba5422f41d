"""`tutor watch`: check an exercise on every save. Textual is imported only once the arguments
are valid (the app is tutor.ui.watch)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tutor import i18n
from tutor.cli.common import EXIT_FAIL, UsageError, err_console, find_exercise, is_chapter, open_progress, parse_chapter
from tutor.course import Course, Exercise, load_course
from tutor.i18n import _
from tutor.progress import Progress
from tutor.session import LearnerSession
from tutor.workspace import Workspace


def watch_target(course: Course, words: list[str], progress: Progress) -> Exercise:
    """EXERCISE, `chapter N` (its first exercise not passed yet), or the current exercise."""
    session = LearnerSession(course, progress)
    if not words:
        return session.current_exercise()
    if is_chapter(words):
        number = parse_chapter(words, course)
        assert number is not None
        found = session.chapter_exercise(course.chapter(number))
        if found is None:
            raise UsageError(_("chapter {number} has no exercises to watch", number=number))
        return found
    if len(words) > 1:
        raise UsageError(_("expected one exercise or `chapter N`, got {got}", got=repr(" ".join(words))))
    return find_exercise(course, words[0])


def cmd_watch(args: argparse.Namespace, home: Path) -> int:
    course = load_course(lang=i18n.language())
    progress = open_progress(home)
    try:
        start = watch_target(course, list(args.target), progress)
    finally:
        progress.close()
    Workspace(home).ensure(course)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        err_console.print(
            "tutor: " + _("`tutor watch` needs an interactive terminal; for headless use run `tutor check`"),
            markup=False,
        )
        return EXIT_FAIL
    from tutor.ui.watch.app import run_watch

    return run_watch(course, home, start, device=args.device)
