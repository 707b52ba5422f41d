"""The `tutor` command. Rich output, one-line errors, no tracebacks for anything a user can cause.

Nothing here imports torch or Textual at module level: `tutor list` must be instant, and the
app is imported only by `tutor start`.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path
from typing import NoReturn, Sequence

from rich.console import Console
from rich.text import Text

from tutor import cjk, gcpause, i18n, paths
from tutor.course import DEFAULT_LANGUAGE, Course, Exercise, LessonError, load_course, load_course_cached
from tutor.i18n import N_, _
from tutor.progress import Progress, ProgressError
from tutor.workspace import Workspace, WorkspaceError

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not usage + traceback-like noise
        err_console.print("tutor: " + _("{message} (see `tutor --help`)", message=message), markup=False)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tutor", description=_("Learn advanced PyTorch by doing, in your terminal."))
    p.add_argument(
        "--workspace",
        metavar="DIR",
        help=_("where your code and progress live (default: $TUTOR_HOME or the per-user data dir)"),
    )
    p.add_argument(
        "--lang",
        choices=sorted(i18n.LANGUAGES),
        default=None,
        help=_(
            "language of the course and of tutor itself (default: $TUTOR_LANG, the language "
            "chosen in the app, then your locale)"
        ),
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("start", help=_("open the tutor at a chapter (or where you left off)"))
    s.add_argument("where", nargs="*", metavar="chapter N", help=_("e.g. `chapter 3` or `3`"))
    s.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")

    sub.add_parser("list", help=_("the chapters and your progress"))

    h = sub.add_parser("hint", help=_("show the next hint for an exercise (default: the current one)"))
    h.add_argument("exercise", nargs="?", help=_("EXERCISE id, or nothing for the current exercise"))

    r = sub.add_parser(
        "reset",
        help=_("restore an exercise's starting code (your version is backed up; default: the current exercise)"),
    )
    r.add_argument("exercise", nargs="?", help=_("EXERCISE id, or nothing for the current exercise"))

    c = sub.add_parser(
        "check",
        help=_("check exercises headless"),
        epilog=_(
            "Your code is run beside the reference solution, with the same inputs, and every value it "
            "is compared on comes from the reference's run. A fair judge of honest code, not a sandbox: "
            "code written to fool tutor itself can forge a pass (README: what the runner guarantees)."
        ),
    )
    c.add_argument("target", nargs="*", help=_("EXERCISE, `chapter N`, or nothing for the current exercise"))
    c.add_argument("--all", action="store_true", help=_("every exercise of the course"))
    c.add_argument("--solutions", action="store_true", help=_("check the reference solutions instead"))
    c.add_argument("--stubs", action="store_true", help=_("check the untouched stubs instead"))
    c.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    c.add_argument("--json", action="store_true", help=_("machine-readable results"))
    c.add_argument(
        "--seed", type=int, metavar="S", help=_("the input seed of a run to reproduce (every verdict shows its seed)")
    )

    w = sub.add_parser("watch", help=_("check an exercise on every save while you edit it in your own editor"))
    w.add_argument("target", nargs="*", help=_("EXERCISE, `chapter N`, or nothing for the current exercise"))
    w.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    o = sub.add_parser("open", help=_("open an exercise's file in $VISUAL/$EDITOR (or print its path)"))
    o.add_argument("exercise", nargs="?", help=_("EXERCISE id, or nothing for the current exercise"))
    pa = sub.add_parser("path", help=_("print the path of an exercise's file (for scripts and editors)"))
    pa.add_argument("exercise", nargs="?", help=_("EXERCISE id, or nothing for the current exercise"))

    sub.add_parser("stats", help=_("your type-along statistics"))
    sub.add_parser("doctor", help=_("what this machine can run"))

    d = sub.add_parser("dev", help=_("course-author tools"))
    dsub = d.add_subparsers(dest="dev_command", metavar="DEV_COMMAND", parser_class=_Parser)
    dc = dsub.add_parser("check", help="validate every lesson; stubs must fail, solutions pass")
    dc.add_argument("--chapter", type=int, action="append", help="only these chapters")
    dc.add_argument("--no-run", action="store_true", help="skip running stubs and solutions")
    dc.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    dc.add_argument("--json", action="store_true")
    dc.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help="also run every solution with N-1 more input seeds (it must pass them all)",
    )
    dm = dsub.add_parser("mutate", help="operator mutants of a solution through its checker: the mutation score")
    dm.add_argument("exercise")
    dm.add_argument("--record", action="store_true", help="write the chapter's lessons/NN-slug/mutants.toml")
    dm.add_argument("--limit", type=int, metavar="N", help="only the first N mutants")
    dm.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    dm.add_argument("--json", action="store_true")
    return p


# ------------------------------------------------------------------------------------------------
# Helpers shared by the commands


def _remembered_language(home: Path) -> str | None:
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


def _progress(home: Path) -> Progress:
    progress = Progress(home)
    if progress.notice:
        err_console.print(f"tutor: {progress.notice}", markup=False)
    return progress


def _warn(text: str) -> None:
    """One line on stderr (so `--json` stays parseable); the command goes on."""
    err_console.print("tutor: " + _("warning:") + " " + text, markup=False)


def _progress_if_possible(home: Path) -> Progress | None:
    """The progress store, or None (said in one line) when it cannot be opened: a full disk or
    a read-only home must not stop a check from giving its verdict."""
    try:
        return _progress(home)
    except ProgressError as exc:
        _warn(_("progress will not be saved: {why}", why=exc))
        return None


def parse_chapter(words: Sequence[str], course: Course) -> int | None:
    """`chapter 3`, `3`, or nothing (None). Raises UsageError naming the valid choices."""
    words = list(words)
    if words and words[0].lower() in ("chapter", "ch"):
        words = words[1:]
        if not words:
            raise UsageError(_("which chapter? choose {choices}", choices=_chapter_range(course)))
    if not words:
        return None
    if len(words) > 1:
        raise UsageError(_("expected one chapter number, got {got}", got=repr(" ".join(words))))
    try:
        number = int(words[0])
    except ValueError:
        raise UsageError(
            _("{got} is not a chapter number; choose {choices}", got=repr(words[0]), choices=_chapter_range(course))
        ) from None
    if number not in {c.number for c in course.chapters}:
        raise UsageError(
            _("there is no chapter {number}; choose {choices}", number=number, choices=_chapter_range(course))
        )
    return number


def _chapter_range(course: Course) -> str:
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


def _ago(ts: float | None) -> str:
    if not ts:
        return "—"
    delta = time.time() - ts
    for unit, size in ((N_("{n}d ago"), 86400), (N_("{n}h ago"), 3600), (N_("{n}m ago"), 60)):
        if delta >= size:
            return _(unit, n=int(delta // size))
    return _("just now")


# ------------------------------------------------------------------------------------------------
# Commands


def cmd_list(args: argparse.Namespace, home: Path) -> int:
    from rich.table import Table

    course = load_course(lang=i18n.language())
    progress = _progress(home)
    done = progress.all_exercises()
    table = Table(title=_("PyTorch tutor · chapters"), title_justify="left")
    table.add_column("#", justify="right")
    table.add_column(_("chapter"))
    table.add_column(_("exercises"), justify="right")
    table.add_column(_("last activity"))
    last = progress.last_position()
    for c in course.chapters:
        ids = [e.id for e in c.exercises]
        passed = sum(1 for i in ids if done.get(i) and done[i].status == "passed")
        bar = f"{passed}/{len(ids)}" + (" ✓" if ids and passed == len(ids) else "")
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
        table.add_row(number, title, bar, _ago(progress.last_activity(ids)))
    if last is not None:
        table.caption = _("▶ where you left off: `tutor start` opens it")
        table.caption_justify = "left"
    console.print(table)
    return EXIT_OK


def _exercise_arg(course: Course, ident: str | None, progress: Progress) -> Exercise:
    """The named exercise, or the one the learner is on (as `tutor check` with no argument)."""
    if ident:
        return find_exercise(course, ident)
    from tutor import headless

    return headless.current_exercise(course, progress)


def _labelled(label: str, text: str, style: str) -> Text:
    """`hint 1/4: text` as one Text (so it wraps as one paragraph); no space after a full-width
    colon (提示 1/4：对…)."""
    return Text.assemble((label, style), ("" if label.endswith("：") else " ") + text, style=style)


def _in_english(ident: str) -> Exercise:
    return find_exercise(load_course(lang=DEFAULT_LANGUAGE), ident)


def cmd_hint(args: argparse.Namespace, home: Path) -> int:
    from tutor import headless

    course = load_course(lang=i18n.language())
    progress = _progress(home)
    exercise = _exercise_arg(course, args.exercise, progress)
    if not args.exercise:  # say which one we picked
        console.print(f"{exercise.id} · {exercise.title}", markup=False, style="bold")
    # The last check failed in a way the course knows: its own hint first, as Tab in the app.
    in_english = None if i18n.language() == DEFAULT_LANGUAGE else partial(_in_english, exercise.id)
    known = headless.last_mistake(exercise, progress, in_english)
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
    shown = before if fresh else progress.use_hint(exercise.id, len(exercise.hints))
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
    exercise = _exercise_arg(course, args.exercise, _progress(home))
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
    progress = _progress(home)
    step_id: str | None = None
    last = progress.last_position()
    if chapter is None:  # resume where the learner left off, else the first chapter
        if last and last[0] in {c.number for c in course.chapters}:
            chapter, step_id = last
        else:
            chapter = course.chapters[0].number
    else:  # where the learner left this chapter, else (None) its first unfinished step
        step_id = progress.chapter_position(chapter)
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
    console.print(render_stats(summarize(_progress(home), course)))
    return EXIT_OK


def cmd_check(args: argparse.Namespace, home: Path) -> int:
    from tutor import headless

    course = load_course(lang=i18n.language())
    if args.solutions and args.stubs:
        raise UsageError(_("choose --solutions or --stubs, not both"))
    progress = _progress_if_possible(home)
    if args.all:
        if args.target:
            raise UsageError(_("--all takes no exercise or chapter"))
        exercises = course.exercises
    elif (
        args.target
        and args.target[0].lower() in ("chapter", "ch")
        or len(args.target) == 1
        and args.target[0].isdigit()
    ):
        number = parse_chapter(args.target, course)
        assert number is not None
        exercises = course.chapter(number).exercises
    elif len(args.target) == 1:
        exercises = [find_exercise(course, args.target[0])]
    elif args.target:
        raise UsageError(_("expected one exercise or `chapter N`, got {got}", got=repr(" ".join(args.target))))
    else:
        exercises = [headless.current_exercise(course, progress)]
    role = "solution" if args.solutions else "stub" if args.stubs else "learner"
    workspace = Workspace(home)
    if role == "learner":
        try:
            workspace.ensure(course)
        except WorkspaceError as exc:  # each exercise whose file is missing says so below
            _warn(str(exc))
    results = headless.run_checks(
        exercises,
        role=role,
        workspace=workspace,
        progress=progress,
        device=args.device,
        home=home,
        console=None if args.json else console,
        seed=args.seed,
        warn=_warn,
    )
    if args.json:
        headless.print_json(results)
    else:
        headless.print_table(results, console)
    return EXIT_OK if all(r.verdict.status in ("passed", "skipped") for r in results) else EXIT_FAIL


def cmd_doctor(args: argparse.Namespace, home: Path) -> int:
    from tutor.doctor import doctor

    return doctor(console, home)


def cmd_dev(args: argparse.Namespace, home: Path) -> int:
    if args.dev_command == "mutate":
        from tutor.course import LessonError, load_course
        from tutor.mutate import dev_mutate

        try:
            load_course().exercise(args.exercise)
        except KeyError:
            raise UsageError(f"no exercise {args.exercise!r} (`tutor list` shows them)") from None
        except LessonError as exc:
            raise UsageError(str(exc)) from None
        return dev_mutate(
            console, home, args.exercise, record=args.record, as_json=args.json, limit=args.limit, device=args.device
        )
    if args.dev_command != "check":
        raise UsageError("usage: tutor dev check [--chapter N] [--no-run] | tutor dev mutate EXERCISE")
    from tutor.devcheck import dev_check

    if args.seeds < 1:
        raise UsageError(_("--seeds must be at least 1"))
    return dev_check(
        console,
        home,
        chapters=args.chapter,
        run=not args.no_run,
        device=args.device,
        as_json=args.json,
        seeds=args.seeds,
    )


def cmd_watch(args: argparse.Namespace, home: Path) -> int:
    from tutor.watch.commands import cmd_watch as watch

    return watch(args, home)


def cmd_open(args: argparse.Namespace, home: Path) -> int:
    from tutor.watch.commands import cmd_open as open_

    return open_(args, home)


def cmd_path(args: argparse.Namespace, home: Path) -> int:
    from tutor.watch.commands import cmd_path as path

    return path(args, home)


COMMANDS = {
    "list": cmd_list,
    "hint": cmd_hint,
    "reset": cmd_reset,
    "start": cmd_start,
    "check": cmd_check,
    "stats": cmd_stats,
    "doctor": cmd_doctor,
    "dev": cmd_dev,
    "watch": cmd_watch,
    "open": cmd_open,
    "path": cmd_path,
}


def _early_language(argv: Sequence[str] | None) -> None:
    """Choose the language before the parser is built, so `--help` and usage errors speak it:
    `--lang` and `--workspace` read leniently here (the real parse reports any mistake)."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--lang")
    early.add_argument("--workspace")
    known, _rest = early.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    try:
        home = paths.home_dir(known.workspace)
        remembered = _remembered_language(home)
    except (OSError, ValueError):  # a bad workspace is reported by main
        remembered = None
    i18n.set_language(i18n.resolve(known.lang, remembered=remembered))


def main(argv: Sequence[str] | None = None) -> int:
    _early_language(argv)
    args = build_parser().parse_args(argv)
    if args.command != "start":  # only the app's start-up runs without the collector
        gcpause.resume()
        # Chinese text breaks between characters, by the app's rules (tutor/cjk.py), in the
        # results table, reasons and hints; Textual stays unimported.
        cjk.install(content=False)
    if not args.command:
        build_parser().print_help()
        return EXIT_USAGE
    try:
        home = paths.home_dir(args.workspace)  # the language was chosen by _early_language
        return COMMANDS[args.command](args, home)
    except UsageError as exc:
        err_console.print(f"tutor: {exc}", markup=False)
        return EXIT_USAGE
    except LessonError as exc:
        err_console.print("tutor: " + _("broken lesson file: {error}", error=exc), markup=False)
        return EXIT_FAIL
    except (ProgressError, WorkspaceError) as exc:
        err_console.print(f"tutor: {exc}", markup=False)
        return EXIT_FAIL
    except OSError as exc:  # disk full, permissions: say which file, never a traceback
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        err_console.print(f"tutor: {exc.strerror or exc}{where}", markup=False)
        return EXIT_FAIL
    except KeyboardInterrupt:
        err_console.print("tutor: " + _("interrupted"), markup=False)
        return 130


if __name__ == "__main__":
    sys.exit(main())
