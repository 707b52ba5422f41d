"""The learner's commands: `tutor list`, `start`, `hint`, `reset`, `stats`, `open` and `path`.

`open` and `path` never import Textual; `start` imports the app only once its arguments are valid.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

from rich.text import Text

from tutor import i18n, paths
from tutor.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    ago,
    console,
    err_console,
    exercise_arg,
    find_exercise,
    open_progress,
    parse_chapter,
)
from tutor.course import DEFAULT_LANGUAGE, Course, Exercise, load_course, load_course_cached
from tutor.external_editor import EditorError, editor_command, open_in_editor
from tutor.i18n import _
from tutor.session import LearnerSession
from tutor.workspace import Workspace


def cmd_list(args: argparse.Namespace, home: Path) -> int:
    from rich.table import Table

    course = load_course(lang=i18n.language())
    progress = open_progress(home)
    passed = LearnerSession(course, progress).passed_ids()
    table = Table(title=_("PyTorch tutor · chapters"), title_justify="left")
    table.add_column("#", justify="right")
    table.add_column(_("chapter"))
    table.add_column(_("exercises"), justify="right")
    table.add_column(_("last activity"))
    last = progress.last_position()
    for c in course.chapters:
        ids = [e.id for e in c.exercises]
        done = sum(1 for i in ids if i in passed)
        bar = f"{done}/{len(ids)}" + (" ✓" if ids and done == len(ids) else "")
        here = last is not None and last[0] == c.number
        title = Text(c.title, style="bold" if here else "")
        if here:  # where `tutor start` takes the learner back to
            step = next((s for s in c.steps if s.id == last[1]), None) if last else None
            if step is not None:
                n = c.steps.index(step) + 1
                title.append(
                    "\n" + _("▶ you are here: step {n}/{total}, {title}", n=n, total=len(c.steps), title=step.title)
                )
            else:
                title.append("\n" + _("▶ you are here"))
        number = f"▶ {c.number}" if here else str(c.number)
        table.add_row(number, title, bar, ago(progress.last_activity(ids)))
    if last is not None:
        table.caption = _("▶ where you left off: `tutor start` opens it")
        table.caption_justify = "left"
    console.print(table)
    return EXIT_OK


def _labelled(label: str, text: str, style: str) -> Text:
    """`hint 1/4: text` as one Text (so it wraps as one paragraph); no space after a full-width
    colon (提示 1/4：对…)."""
    return Text.assemble((label, style), ("" if label.endswith("：") else " ") + text, style=style)


def _in_english(ident: str) -> Exercise:
    return find_exercise(load_course(lang=DEFAULT_LANGUAGE), ident)


def cmd_hint(args: argparse.Namespace, home: Path) -> int:
    course = load_course(lang=i18n.language())
    progress = open_progress(home)
    session = LearnerSession(course, progress)
    exercise = exercise_arg(course, args.exercise, progress)
    if not args.exercise:  # say which one we picked
        console.print(f"{exercise.id} · {exercise.title}", markup=False, style="bold")
    # The last check failed in a way the course knows: its own hint first, as Tab in the app.
    in_english = None if i18n.language() == DEFAULT_LANGUAGE else partial(_in_english, exercise.id)
    known = session.last_mistake(exercise, in_english)
    seen = f"targeted-hint:{exercise.id}"
    fresh = known is not None and progress.get_state(seen) != repr(known[1])
    before = progress.exercise(exercise.id).hints_used
    if before >= len(exercise.hints) and not fresh:
        console.print(
            Text(exercise.title, style="bold"),
            Text(
                _(
                    ": all {n} hints are shown below; the reference solution is the next "
                    "step (in the app, Tab once more).",
                    n=len(exercise.hints),
                )
            ),
            sep="",
        )
    # A fresh targeted hint is this call's new hint; the ladder moves on at the next call.
    shown = before if fresh else session.use_hint(exercise)
    for i in range(shown):
        style = "bold" if i == shown - 1 and not fresh else "dim"
        console.print(_labelled(_("hint {i}/{n}:", i=i + 1, n=len(exercise.hints)), exercise.hints[i], style))
    if known is not None:
        style = "bold" if fresh else "dim"
        console.print(Text(_("For the mistake your last check found") + _(":"), style=style))
        console.print(Text(known[0].hint, style=style))
    if fresh and known is not None:
        progress.set_state(seen, repr(known[1]))
        if shown < len(exercise.hints):
            console.print(Text(_("`tutor hint` again shows the next hint."), style="dim"))
    return EXIT_OK


def cmd_reset(args: argparse.Namespace, home: Path) -> int:
    course = load_course(lang=i18n.language())
    exercise = exercise_arg(course, args.exercise, open_progress(home))
    backup = Workspace(home).reset(exercise)
    if backup:
        console.print(
            _("Restored the starting code of {id}. Your version is saved as {path}", id=exercise.id, path=backup),
            markup=False,
        )
    else:
        console.print(_("{id} already had its starting code; nothing to back up.", id=exercise.id), markup=False)
    return EXIT_OK


def _start_course(home: Path, lang: str = "en") -> Course:
    """The course for `tutor start`: the last load reused while no lesson file changed (it
    would otherwise parse and validate every manifest before the first paint)."""
    return load_course_cached(paths.cache_dir(home) / f"course-{lang}.pickle", lang=lang)


def cmd_start(args: argparse.Namespace, home: Path) -> int:
    course = _start_course(home, i18n.language())
    chapter = parse_chapter(args.where, course)
    workspace = Workspace(home)
    workspace.ensure(course)
    progress = open_progress(home)
    chapter, step_id = LearnerSession(course, progress).start_position(chapter)
    progress.set_position(chapter, step_id)
    progress.close()
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        err_console.print(
            "tutor: " + _("`tutor start` needs an interactive terminal; for headless use run `tutor check`"),
            markup=False,
        )
        return EXIT_FAIL
    from tutor.ui.app import run_app

    return run_app(
        course, home, chapter, step_id, device=args.device, course_loader=lambda lang: _start_course(home, lang)
    )


def cmd_stats(args: argparse.Namespace, home: Path) -> int:
    from tutor.stats import render_stats, summarize

    course = load_course(lang=i18n.language())
    console.print(render_stats(summarize(open_progress(home), course)))
    return EXIT_OK


def _file(args: argparse.Namespace, home: Path, remember: bool) -> tuple[Exercise, Path]:
    course = load_course(lang=i18n.language())
    progress = open_progress(home)
    try:
        exercise = exercise_arg(course, args.exercise, progress)
        workspace = Workspace(home)
        workspace.ensure(course)
        if remember and args.exercise:  # opening an exercise makes it the current one, as watch does
            LearnerSession(course, progress).go_to(exercise)
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
