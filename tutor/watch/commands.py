"""`tutor watch`, `tutor open` and `tutor path` (wired up in tutor/cli.py).

`open` and `path` never import Textual; `watch` imports it only once its arguments are valid.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tutor import headless, i18n
from tutor.cli import (
    EXIT_FAIL,
    EXIT_OK,
    UsageError,
    _exercise_arg,
    _progress,
    console,
    err_console,
    find_exercise,
    parse_chapter,
)
from tutor.course import Course, Exercise, load_course
from tutor.i18n import _
from tutor.progress import Progress
from tutor.watch.editor import EditorError, editor_command, open_in_editor
from tutor.workspace import Workspace


def watch_target(course: Course, words: list[str], progress: Progress) -> Exercise:
    """EXERCISE, `chapter N` (its first exercise not passed yet), or the current exercise."""
    if not words:
        return headless.current_exercise(course, progress)
    if words[0].lower() in ("chapter", "ch") or (len(words) == 1 and words[0].isdigit()):
        number = parse_chapter(words, course)
        assert number is not None
        chapter = course.chapter(number)
        if not chapter.exercises:
            raise UsageError(_("chapter {number} has no exercises to watch", number=number))
        done = progress.all_exercises()
        return next(
            (e for e in chapter.exercises if e.id not in done or done[e.id].status != "passed"), chapter.exercises[0]
        )
    if len(words) > 1:
        raise UsageError(_("expected one exercise or `chapter N`, got {got}", got=repr(" ".join(words))))
    return find_exercise(course, words[0])


def cmd_watch(args: argparse.Namespace, home: Path) -> int:
    course = load_course(lang=i18n.language())
    progress = _progress(home)
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
    from tutor.watch.app import run_watch

    return run_watch(course, home, start, device=args.device)


def _file(args: argparse.Namespace, home: Path, remember: bool) -> tuple[Exercise, Path]:
    course = load_course(lang=i18n.language())
    progress = _progress(home)
    try:
        exercise = _exercise_arg(course, args.exercise, progress)
        workspace = Workspace(home)
        workspace.ensure(course)
        if remember and args.exercise:  # opening an exercise makes it the current one, as watch does
            progress.set_position(course.chapter_of(exercise).number, exercise.id)
    finally:
        progress.close()
    return exercise, workspace.path(exercise).absolute()


def cmd_path(args: argparse.Namespace, home: Path) -> int:
    _exercise, path = _file(args, home, remember=False)
    print(path)  # plain print: no Rich wrapping, so scripts get the path intact
    return EXIT_OK


def cmd_open(args: argparse.Namespace, home: Path) -> int:
    exercise, path = _file(args, home, remember=True)
    try:
        command = editor_command()
        if command is None:
            print(path)
            err_console.print(
                "tutor: "
                + _(
                    "set $VISUAL or $EDITOR to open it from here "
                    "(e.g. `export EDITOR=vim` or `export VISUAL='code --wait'`)"
                ),
                markup=False,
            )
            return EXIT_OK
        if not args.exercise:
            console.print(f"{exercise.id} · {exercise.title}", markup=False, style="bold")
        status = open_in_editor(command, path)
    except EditorError as exc:
        err_console.print(f"tutor: {exc}", markup=False)
        return EXIT_FAIL
    if status != 0:
        err_console.print(
            "tutor: " + _("{command} exited with status {status}", command=command[0], status=status), markup=False
        )
        return EXIT_FAIL
    return EXIT_OK
