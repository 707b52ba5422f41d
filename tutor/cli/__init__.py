"""The `tutor` command: its arguments and the dispatch to the command modules (`learn`, `check`,
`watch`, `dev`, `doctor`; what they share is in `common`). Rich output, one-line errors, no
tracebacks for anything a user can cause.

Nothing here imports torch or Textual: `tutor list` must be instant, and the app is imported
only by `tutor start`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Callable, NoReturn, Sequence

from tutor import cjk, gcpause, i18n, paths
from tutor.cli.common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError, err_console, remembered_language
from tutor.course import LessonError
from tutor.i18n import _
from tutor.progress import ProgressError
from tutor.workspace import WorkspaceError

__all__ = ["EXIT_FAIL", "EXIT_OK", "EXIT_USAGE", "UsageError", "build_parser", "main"]


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
# Dispatch: each command lives in the module of its family, imported only when it runs (the app
# and the runner client stay unimported for `tutor list`).

COMMANDS = {
    "list": "learn:cmd_list",
    "hint": "learn:cmd_hint",
    "reset": "learn:cmd_reset",
    "start": "learn:cmd_start",
    "stats": "learn:cmd_stats",
    "open": "learn:cmd_open",
    "path": "learn:cmd_path",
    "check": "check:cmd_check",
    "watch": "watch:cmd_watch",
    "doctor": "doctor:cmd_doctor",
    "dev": "dev:cmd_dev",
}


def command(name: str) -> Callable[[argparse.Namespace, Path], int]:
    module, _sep, function = COMMANDS[name].partition(":")
    found: Callable[[argparse.Namespace, Path], int] = getattr(importlib.import_module(f"tutor.cli.{module}"), function)
    return found


def _early_language(argv: Sequence[str] | None) -> None:
    """Choose the language before the parser is built, so `--help` and usage errors speak it:
    `--lang` and `--workspace` read leniently here (the real parse reports any mistake)."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--lang")
    early.add_argument("--workspace")
    known, _rest = early.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    try:
        home = paths.home_dir(known.workspace)
        remembered = remembered_language(home)
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
        cjk.install()
    if not args.command:
        build_parser().print_help()
        return EXIT_USAGE
    try:
        home = paths.home_dir(args.workspace)  # the language was chosen by _early_language
        return command(args.command)(args, home)
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
