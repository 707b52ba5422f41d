"""`tutor check`: run exercises through the runner with a progress bar, store the verdicts, and
show them as a table or JSON (`tutor dev check` runs stubs and solutions through the same
`run_checks`). No torch, no Textual."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from rich.console import Console
from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar
from rich.table import Table
from rich.text import Text

from tutor import i18n, paths, textsafe
from tutor.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    UsageError,
    console,
    find_exercise,
    is_chapter,
    parse_chapter,
    progress_if_possible,
    warn,
)
from tutor.course import Exercise, load_course
from tutor.i18n import N_, _
from tutor.progress import ProgressError
from tutor.runner.client import Runner
from tutor.runner.protocol import ERROR, Event, Verdict
from tutor.session import LearnerSession
from tutor.status import Status, status_style, status_word
from tutor.formatting import OUTPUT_LINES, fmt_bytes, fmt_seconds
from tutor.workspace import Workspace, WorkspaceError

ROLE_WORDS = {"learner": N_("yours"), "solution": N_("solution"), "stub": N_("stub")}


BAD = tuple(s for s in Status if s.bad)  # a failure worth repeating with its seed


@dataclass
class CheckResult:
    exercise: Exercise
    role: str  # learner | solution | stub
    verdict: Verdict


def code_for(exercise: Exercise, role: str, workspace: Workspace) -> Path:
    if role == "solution":
        return exercise.solution
    if role == "stub":
        return exercise.stub
    workspace.read(exercise)  # creates it from the stub if missing
    return workspace.path(exercise)


def checkable(exercise: Exercise, role: str, workspace: Workspace) -> tuple[Path | None, str | None]:
    """The file to check, or why it cannot be checked (a folder, not a regular file,
    unreadable, missing and not creatable): one exercise's error, never the end of a
    chapter's check."""
    path = workspace.path(exercise) if role == "learner" else code_for(exercise, role, workspace)
    if path.is_dir():
        return None, _(
            "{path} is a folder, not your exercise file; move it away and tutor puts the starting code there", path=path
        )
    if path.exists() and not path.is_file():
        return None, _("{path} is not a regular file; tutor checks the Python file at that path", path=path)
    try:
        code_for(exercise, role, workspace)  # creates the learner's file from the stub if missing
        with path.open("rb"):
            pass
    except (OSError, WorkspaceError, UnicodeDecodeError, ValueError) as exc:
        return None, _("cannot read {path}: {why}", path=path, why=getattr(exc, "strerror", None) or exc)
    return path, None


def run_checks(
    exercises: Iterable[Exercise],
    *,
    role: str,
    workspace: Workspace,
    session: LearnerSession | None,
    device: str,
    home: Path,
    console: Console | None,
    runner: Runner | None = None,
    seed: int | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[CheckResult]:
    """Check each exercise's `role` file in turn; a learner's verdicts are recorded through
    `session` (None: nothing is stored)."""
    exercises = list(exercises)

    def say(text: str) -> None:
        if warn is not None:
            warn(text)
        elif console is not None:
            console.print(Text(_("warning:"), style="yellow"), Text(text))

    own_runner = runner is None
    runner = runner or Runner(cache_dir=paths.cache_dir(home), device=device)
    results: list[CheckResult] = []
    try:
        bar = Bar(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[phase]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=console is None,
        )
        with bar:
            task = bar.add_task(_("starting the runner"), total=len(exercises), phase="")
            for exercise in exercises:
                bar.update(task, description=f"{exercise.id} ({_(ROLE_WORDS.get(role, role))})", phase="")

                def on_event(event: Event, _task: Any = task) -> None:
                    if event.kind == "phase":
                        bar.update(_task, phase=f"{event.text} · {event.elapsed_s:.0f} s")

                code, problem = checkable(exercise, role, workspace)
                if code is None:
                    verdict = Verdict(status=ERROR, reason=problem or "", seed=seed)
                else:
                    verdict = runner.check(exercise, code, on_event=on_event, seed=seed)
                results.append(CheckResult(exercise, role, verdict))
                if session is not None:
                    try:
                        session.record(exercise, verdict, role=role)
                    except ProgressError as exc:
                        session = None  # said once; the remaining verdicts are still shown
                        say(_("progress was not saved: {why}", why=exc))
                bar.advance(task)
    finally:
        if own_runner:
            runner.close()
    return results


def summary_figures(figures: dict[str, Any]) -> tuple[str, str, str]:
    """(time, speedup, memory) columns: learner vs reference, or the figure's two named sides."""
    t = figures.get("time")
    m = figures.get("memory")
    time_col = speed_col = mem_col = "—"
    if isinstance(t, dict) and "learner_s" in t and "reference_s" in t:
        time_col = _pair(t, fmt_seconds(t["learner_s"]), fmt_seconds(t["reference_s"]))
        if t.get("noisy"):
            speed_col = _("too noisy to call")
        elif isinstance(t.get("speedup"), (int, float)):
            speed_col = f"{t['speedup']:.2f}x"
    if isinstance(m, dict):
        mem_col = _pair(m, fmt_bytes(m["learner_bytes"]), fmt_bytes(m["reference_bytes"]))
    return time_col, speed_col, mem_col


def _pair(figure: dict[str, Any], first: str, second: str) -> str:
    """`2.1 ms vs 3.4 ms`, each value named when the figure's rows are not yours and the reference's."""
    sides = figure.get("sides")
    if isinstance(sides, list) and len(sides) == 2 and all(isinstance(x, str) and x.strip() for x in sides):
        first, second = f"{sides[0].strip()} {first}", f"{sides[1].strip()} {second}"
    return _("{yours} vs {ref}", yours=first, ref=second)


def print_table(results: list[CheckResult], console: Console) -> None:
    table = Table(title_justify="left")
    # The id whole (what `tutor check ID` takes), never cut to `func-vmap-lin…`.
    table.add_column(_("exercise"), min_width=max((len(r.exercise.id) for r in results), default=0))
    table.add_column(_("verdict"))
    table.add_column(_("reason"), overflow="fold", ratio=3)
    # The figure columns only when a result has a figure (at 80 columns they take the
    # reason's room); they wrap rather than end in "…": a timing with named sides is longer.
    figures = any(summary_figures(r.verdict.figures) != ("—", "—", "—") for r in results)
    if figures:
        table.add_column(_("time (yours vs ref)"), overflow="fold")
        table.add_column(_("speedup"), justify="right")
        table.add_column(_("peak memory"), overflow="fold")
    for r in results:
        v = r.verdict
        label = Text(r.exercise.id)
        if r.role != "learner":
            label.append(f" ({_(ROLE_WORDS.get(r.role, r.role))})", style="dim")
        time_col, speed_col, mem_col = summary_figures(v.figures)
        reason = v.reason if v.status != Status.PASSED else ""
        if v.details and v.status != Status.PASSED:
            reason += "\n" + "\n".join(v.details[:6])
        if v.status in BAD and v.seed is not None and r.role == "learner":
            reason += "\n" + _(
                "(seed {seed}: `tutor check {id} --seed {seed}` repeats this run)", seed=v.seed, id=r.exercise.id
            )
        # Learner text (reasons quote their code and exception messages) is never markup.
        table.add_row(
            label,
            Text(status_word(v.status), style=status_style(v.status)),
            Text(textsafe.clean(reason)),
            *((time_col, speed_col, mem_col) if figures else ()),
        )
    console.print(table)
    for r in results:
        print_output(r, console, heading=len(results) > 1)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict.status] = counts.get(r.verdict.status, 0) + 1
    console.print(_(", ").join(f"{n} {status_word(s)}" for s, n in counts.items()) or _("nothing to check"))


def print_output(r: CheckResult, console: Console, heading: bool = True) -> None:
    """What the learner's code printed (the last lines), shown as plain text."""
    text = textsafe.clean(r.verdict.output).rstrip("\n")
    if not text.strip():
        return
    lines = text.split("\n")
    cut = len(lines) > OUTPUT_LINES or r.verdict.output_truncated
    title = _("output of {id}", id=r.exercise.id) if heading else _("output")
    if cut:
        title += " " + _("(the last {n} lines)", n=min(len(lines), OUTPUT_LINES))
    console.print(Text(title + _(":"), style="bold"))
    console.print(Text("\n".join(lines[-OUTPUT_LINES:])), soft_wrap=True)


def result_dict(r: CheckResult) -> dict[str, Any]:
    return {"exercise": r.exercise.id, "chapter": r.exercise.chapter_slug, "role": r.role, **r.verdict.to_dict()}


def print_json(results: list[CheckResult]) -> None:
    print(json.dumps([result_dict(r) for r in results], indent=2, default=str))


def cmd_check(args: argparse.Namespace, home: Path) -> int:
    course = load_course(lang=i18n.language())
    if args.solutions and args.stubs:
        raise UsageError(_("choose --solutions or --stubs, not both"))
    progress = progress_if_possible(home)
    session = LearnerSession(course, progress) if progress is not None else None
    if args.all:
        if args.target:
            raise UsageError(_("--all takes no exercise or chapter"))
        exercises = course.exercises
    elif is_chapter(args.target):
        number = parse_chapter(args.target, course)
        assert number is not None
        exercises = course.chapter(number).exercises
    elif len(args.target) == 1:
        exercises = [find_exercise(course, args.target[0])]
    elif args.target:
        raise UsageError(_("expected one exercise or `chapter N`, got {got}", got=repr(" ".join(args.target))))
    else:
        exercises = [LearnerSession(course, progress).current_exercise()]
    role = "solution" if args.solutions else "stub" if args.stubs else "learner"
    workspace = Workspace(home)
    if role == "learner":
        try:
            workspace.ensure(course)
        except WorkspaceError as exc:  # each exercise whose file is missing says so below
            warn(str(exc))
    results = run_checks(
        exercises,
        role=role,
        workspace=workspace,
        session=session,
        device=args.device,
        home=home,
        console=None if args.json else console,
        seed=args.seed,
        warn=warn,
    )
    if args.json:
        print_json(results)
    else:
        print_table(results, console)
    return EXIT_OK if all(r.verdict.status in (Status.PASSED, Status.SKIPPED) for r in results) else EXIT_FAIL
