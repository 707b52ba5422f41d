"""`tutor dev check`: the course author's gate, modelled on rustlings' `dev check`.

Every manifest loads; every guide code block parses; every stub has TODO markers; every
exercise's stub FAILS its check and its solution PASSES. Exercises this machine cannot run
(CUDA, several GPUs) are reported as skipped, never counted as passed.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tutor import paths
from tutor.checks import STATUS_STYLE, run_checks
from tutor.course import Course, Exercise, LessonError, code_blocks, load_course
from tutor.runner.client import Runner
from tutor.workspace import Workspace


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)  # exercise, stub, solution, note
    skipped: int = 0


def _syntax_problem(code: str, path: Path, course: Course, where: str = "") -> str | None:
    try:
        ast.parse(code, filename=str(path))
    except SyntaxError as exc:
        return f"{_rel(path, course)}: {where}line {exc.lineno}: {exc.msg}"
    return None


def static_problems(course: Course) -> list[str]:
    """Problems found without running anything."""
    found: list[str | None] = []
    for chapter in course.chapters:
        for step in chapter.steps:
            for path in step.texts.values():
                for i, block in enumerate(code_blocks(path.read_text(encoding="utf-8"))):
                    if block.language == "python":
                        found.append(_syntax_problem(block.code, path, course, f"python block {i}: "))
            if not isinstance(step, Exercise):
                continue
            if "TODO" not in step.stub.read_text(encoding="utf-8"):
                found.append(f"{_rel(step.stub, course)}: the stub has no TODO marker")
            # The exercise's files and the chapter's shared checker helpers (checks/_*.py).
            for path in (step.stub, step.solution, step.checker, *step.checker.parent.glob("_*.py")):
                found.append(_syntax_problem(path.read_text(encoding="utf-8"), path, course))
            if "def check" not in step.checker.read_text(encoding="utf-8"):
                found.append(f"{_rel(step.checker, course)}: no `def check(ctx)`")
    return list(dict.fromkeys(p for p in found if p))  # a shared helper is seen once per exercise


def _rel(path: Path, course: Course) -> str:
    for parent in path.parents:
        if parent.name in ("lessons", "solutions"):
            return str(path.relative_to(parent.parent))
    return str(path)


def dev_check(console: Console, home: Path, chapters: list[int] | None = None, run: bool = True,
              device: str = "auto", as_json: bool = False, seeds: int = 1) -> int:
    try:
        course = load_course()
    except LessonError as exc:
        console.print(f"[red]✗[/] {exc}", markup=True, highlight=False)
        return 1
    wanted = [c for c in course.chapters if not chapters or c.number in chapters]
    if chapters and len(wanted) != len(set(chapters)):
        console.print(f"[red]✗[/] no chapter {sorted(set(chapters) - {c.number for c in wanted})}")
        return 2
    report = Report(problems=[p for p in static_problems(course)
                              if not chapters or any(c.slug in p for c in wanted)])
    exercises = [e for c in wanted for e in c.exercises]
    if run and exercises:
        workspace = Workspace(home)
        runner = Runner(cache_dir=paths.cache_dir(home), device=device)
        try:
            show = None if as_json else console
            stubs = run_checks(exercises, role="stub", workspace=workspace, progress=None,
                               device=device, home=home, console=show, runner=runner)
            sols = run_checks(exercises, role="solution", workspace=workspace, progress=None,
                              device=device, home=home, console=show, runner=runner)
            # More seeds: a correct solution must pass for every draw of the inputs, not one.
            for extra in range(1, seeds):
                again = run_checks(exercises, role="solution", workspace=workspace, progress=None,
                                   device=device, home=home, console=show, runner=runner, seed=extra)
                for r in again:
                    if r.verdict.status not in ("passed", "skipped"):
                        report.problems.append(f"{r.exercise.key}: the solution fails with seed {extra}: "
                                               f"{r.verdict.status}: {r.verdict.reason}")
        finally:
            runner.close()
        for stub, sol in zip(stubs, sols):
            e = stub.exercise
            sv, rv = stub.verdict, sol.verdict
            note = ""
            if rv.status == "skipped" or sv.status == "skipped":
                report.skipped += 1
                note = rv.reason or sv.reason
            else:
                if sv.status == "passed":
                    report.problems.append(f"{e.key}: the stub PASSES its check (it must fail)")
                if rv.status != "passed":
                    report.problems.append(f"{e.key}: the solution does not pass: {rv.status}: {rv.reason}"
                                           + ("".join(f"\n    {d}" for d in rv.details[:8])))
                    if rv.output.strip():
                        report.problems.append("    output: " + rv.output.strip()[-1500:].replace("\n", "\n    "))
                note = f"stub: {sv.reason[:90]}" if sv.status != "passed" else ""
            report.rows.append((e.key, sv.status, rv.status, note + f"  [{rv.duration_s:.1f} s]"))
    if as_json:
        print(json.dumps({"problems": report.problems, "skipped": report.skipped,
                          "exercises": [dict(zip(("exercise", "stub", "solution", "note"), r))
                                        for r in report.rows]}, indent=2))
    else:
        if report.rows:
            table = Table(title="tutor dev check", title_justify="left")
            for col in ("exercise", "stub (must fail)", "solution (must pass)", "note"):
                table.add_column(col, overflow="fold")
            for key, sv, rv, note in report.rows:
                stub_style = "green" if sv not in ("passed", "skipped") else STATUS_STYLE.get(sv, "")
                table.add_row(key, f"[{stub_style}]{sv}[/]", f"[{STATUS_STYLE.get(rv, '')}]{rv}[/]", note)
            console.print(table)
        for p in report.problems:
            console.print("✗ " + p, style="red", highlight=False, markup=False)
        n = len(wanted)
        console.print(f"{n} chapter(s), {len(exercises)} exercise(s), {report.skipped} skipped on this machine, "
                      f"{len(report.problems)} problem(s)")
    return 1 if report.problems else 0
