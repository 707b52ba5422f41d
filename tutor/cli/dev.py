"""`tutor dev check` and `tutor dev mutate`: the course author's gate.

`dev check` is three parts: the course's rules (tutor/course_rules.py and the mutation
records), the runs (every stub must fail, every solution pass on every seed asked for, every
targeted hint be reachable) and the report (a table or JSON). Exercises this machine cannot
run (CUDA, several GPUs) are reported as skipped, never counted as passed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tutor import paths
from tutor.cli.check import CheckResult, run_checks
from tutor.cli.common import UsageError, console
from tutor.course import Chapter, Course, Exercise, LessonError, load_course
from tutor.course_rules import (
    emphasis_problems,
    mistake_problems,
    reason_problems,
    stale_translations,
    static_problems,
    translation_problems,
    untranslated_report,
    zh_problems,
)
from tutor.i18n import _
from tutor.mutate import RecordStatus, record_status
from tutor.runner.client import Runner
from tutor.status import Status, status_style
from tutor.workspace import Workspace


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)  # exercise, stub, solution, note
    skipped: int = 0
    warnings: list[str] = field(default_factory=list)  # reported, never a failure
    mutation: list[RecordStatus] = field(default_factory=list)


def cmd_dev(args: argparse.Namespace, home: Path) -> int:
    if args.dev_command == "mutate":
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


def dev_check(
    console: Console,
    home: Path,
    chapters: list[int] | None = None,
    run: bool = True,
    device: str = "auto",
    as_json: bool = False,
    seeds: int = 1,
) -> int:
    try:
        course = load_course()
    except LessonError as exc:
        console.print(f"[red]✗[/] {exc}", markup=True, highlight=False)
        return 1
    wanted = [c for c in course.chapters if not chapters or c.number in chapters]
    if chapters and len(wanted) != len(set(chapters)):
        console.print(f"[red]✗[/] no chapter {sorted(set(chapters) - {c.number for c in wanted})}")
        return 2
    report = check_rules(course, wanted, whole=not chapters)
    exercises = [e for c in wanted for e in c.exercises]
    if run and exercises:
        check_runs(report, exercises, home, device, seeds, None if as_json else console)
    if as_json:
        print_json(report)
    else:
        print_report(report, console, chapters=len(wanted), exercises=len(exercises))
    return 1 if report.problems else 0


# -- the rules ------------------------------------------------------------------------------------


def check_rules(course: Course, wanted: list[Chapter], whole: bool = True) -> Report:
    """Every rule that needs no run, and the mutation records' state, for the `wanted` chapters
    (`whole`: the whole course was asked for)."""

    def ours(text: str) -> bool:
        return whole or any(c.slug in text for c in wanted)

    i18n_problems, untranslated = untranslated_report()
    found = (
        static_problems(course)
        + translation_problems(course)
        + reason_problems(course)
        + i18n_problems
        + emphasis_problems(course)
        + zh_problems(course)
    )
    report = Report(
        problems=[p for p in found if ours(p)],
        warnings=[w for w in untranslated + stale_translations(course) if ours(w)],
    )
    ids = {e.id for c in wanted for e in c.exercises}
    report.mutation = [m for m in record_status(course) if m.exercise in ids]
    report.problems += [
        f"{m.exercise}: its mutation record is stale (the solution or checker changed since it was "
        f"measured): run `tutor dev mutate {m.exercise} --record`"
        for m in report.mutation
        if m.stale
    ]
    return report


# -- the runs -------------------------------------------------------------------------------------


def check_runs(
    report: Report, exercises: list[Exercise], home: Path, device: str, seeds: int, console: Console | None
) -> None:
    """Stubs must fail, solutions pass on seeds 0..seeds-1, targeted hints be reachable."""
    workspace = Workspace(home)
    runner = Runner(cache_dir=paths.cache_dir(home), device=device)

    def run(role: str, seed: int | None = None) -> list[CheckResult]:
        return run_checks(
            exercises,
            role=role,
            workspace=workspace,
            session=None,
            device=device,
            home=home,
            console=console,
            runner=runner,
            seed=seed,
        )

    try:
        stubs, sols = run("stub"), run("solution")
        # More seeds: a correct solution must pass for every draw of the inputs, not one.
        for extra in range(1, seeds):
            for r in run("solution", seed=extra):
                if r.verdict.status not in (Status.PASSED, Status.SKIPPED):
                    report.problems.append(
                        f"{r.exercise.key}: the solution fails with seed {extra}: {r.verdict.status}: {r.verdict.reason}"
                    )
        with tempfile.TemporaryDirectory(prefix="tutor-mistakes-") as scratch:
            report.problems += mistake_problems(exercises, runner, Path(scratch))
    finally:
        runner.close()
    for stub, sol in zip(stubs, sols):
        _judge_pair(report, stub, sol)


def _judge_pair(report: Report, stub: CheckResult, sol: CheckResult) -> None:
    e, sv, rv = stub.exercise, stub.verdict, sol.verdict
    note = ""
    if rv.status == Status.SKIPPED or sv.status == Status.SKIPPED:
        report.skipped += 1
        note = rv.reason or sv.reason
    else:
        if sv.status == Status.PASSED:
            report.problems.append(f"{e.key}: the stub PASSES its check (it must fail)")
        if rv.status != Status.PASSED:
            report.problems.append(
                f"{e.key}: the solution does not pass: {rv.status}: {rv.reason}"
                + ("".join(f"\n    {d}" for d in rv.details[:8]))
            )
            if rv.output.strip():
                report.problems.append("    output: " + rv.output.strip()[-1500:].replace("\n", "\n    "))
        note = f"stub: {sv.reason[:90]}" if sv.status != Status.PASSED else ""
    report.rows.append((e.key, sv.status, rv.status, note + f"  [{rv.duration_s:.1f} s]"))


# -- the report -----------------------------------------------------------------------------------


def print_json(report: Report) -> None:
    print(
        json.dumps(
            {
                "problems": report.problems,
                "translation_warnings": report.warnings,
                "skipped": report.skipped,
                "exercises": [dict(zip(("exercise", "stub", "solution", "note"), r)) for r in report.rows],
                "mutation": [
                    {
                        "exercise": m.exercise,
                        "mutants": m.mutants,
                        "killed": m.killed,
                        "equivalent": m.equivalent,
                        "unexplained_survivors": m.unexplained,
                        "score": round(m.ratio, 4),
                        "stale": m.stale,
                    }
                    for m in report.mutation
                    if m.measured
                ],
            },
            indent=2,
        )
    )


def print_report(report: Report, console: Console, chapters: int, exercises: int) -> None:
    if report.rows:
        table = Table(title="tutor dev check", title_justify="left")
        for col in ("exercise", "stub (must fail)", "solution (must pass)", "note"):
            table.add_column(col, overflow="fold")
        for key, stub_status, sol_status, note in report.rows:
            # A stub that fails is as it should be: green, whichever way it failed.
            stub_style = "green" if stub_status not in (Status.PASSED, Status.SKIPPED) else status_style(stub_status)
            table.add_row(key, f"[{stub_style}]{stub_status}[/]", f"[{status_style(sol_status)}]{sol_status}[/]", note)
        console.print(table)
    if report.warnings:
        console.print(
            f"! {len(report.warnings)} translation warning(s): steps not fully translated "
            "(shown in English) or translated from an older English text:",
            style="yellow",
            highlight=False,
            markup=False,
        )
        for w in report.warnings:
            console.print("  " + w, style="yellow", highlight=False, markup=False)
    measured = [m for m in report.mutation if m.measured]
    if measured:
        console.print(
            f"mutation scores ({len(measured)} of {len(report.mutation)} exercises measured):", highlight=False
        )
        for m in measured:
            console.print(
                f"  {m.exercise}: {m.killed}/{m.mutants - m.equivalent} killed ({m.ratio:.0%}), "
                f"{m.equivalent} equivalent, {m.unexplained} unexplained" + (" [stale]" if m.stale else ""),
                highlight=False,
                markup=False,
            )
    for p in report.problems:
        console.print("✗ " + p, style="red", highlight=False, markup=False)
    console.print(
        f"{chapters} chapter(s), {exercises} exercise(s), {report.skipped} skipped on this machine, "
        f"{len(report.warnings)} translation warning(s), {len(report.problems)} problem(s)"
    )
