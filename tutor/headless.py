"""Headless checking for `tutor check` and `tutor dev check`: run exercises through the runner,
show progress and a results table, store the results. No torch, no Textual."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from rich.console import Console
from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar
from rich.table import Table
from rich.text import Text

from tutor import paths, textsafe
from tutor.course import Course, Exercise, Mistake
from tutor.i18n import N_, _
from tutor.progress import Progress, ProgressError
from tutor.runner.client import Runner
from tutor.runner.protocol import ERROR, Event, Verdict
from tutor.units import fmt_bytes, fmt_seconds
from tutor.workspace import Workspace, WorkspaceError

ROLE_WORDS = {"learner": N_("yours"), "solution": N_("solution"), "stub": N_("stub")}
STATUS_WORDS = {
    "passed": N_("passed"),
    "failed": N_("failed"),
    "error": N_("error"),
    "timeout": N_("timed out"),
    "crashed": N_("crashed"),
    "skipped": N_("skipped"),
    "cancelled": N_("cancelled"),
}
STATUS_STYLE = {
    "passed": "green",
    "failed": "red",
    "error": "red",
    "timeout": "yellow",
    "crashed": "red",
    "skipped": "dim",
    "cancelled": "dim",
}


@dataclass
class CheckResult:
    exercise: Exercise
    role: str  # learner | solution | stub
    verdict: Verdict


def current_exercise(course: Course, progress: Progress | None) -> Exercise:
    """The exercise the learner is on: the current step if it is one, else the chapter's first
    unfinished exercise, else the course's (the course's first without a progress store)."""
    if progress is None:
        return course.exercises[0]
    last = progress.last_position()
    statuses = progress.all_exercises()
    chapters = list(course.chapters)
    if last:
        try:
            chapter = course.chapter(last[0])
            if last[1]:
                step = chapter.step(last[1])
                if isinstance(step, Exercise):
                    return step
            chapters = [chapter] + [c for c in chapters if c is not chapter]
        except KeyError:
            pass
    for c in chapters:
        for e in c.exercises:
            if statuses.get(e.id) is None or statuses[e.id].status != "passed":
                return e
    return course.exercises[0]


def last_mistake(
    exercise: Exercise, progress: Progress, english: Callable[[], Exercise] | None = None
) -> tuple[Mistake, float] | None:
    """The known mistake (and when) of the learner's last check of `exercise`, when it failed
    with a reason a [[steps.mistakes]] entry recognises: what the app's Tab offers first
    (Exercise.mistake_for). A reason stored in English while the course is in another
    language is matched by the words of `english()` (the exercise in English, loaded only
    then), the mistakes being the same list in order."""
    run = next((r for r in progress.runs(exercise.id, limit=20) if r.role == "learner"), None)
    if run is None or run.status in ("passed", "skipped", "cancelled"):
        return None
    mistake = exercise.mistake_for(run.reason)
    if mistake is None and english is not None:
        original = english()
        found = original.mistake_for(run.reason)
        if found is not None and len(original.mistakes) == len(exercise.mistakes):
            mistake = exercise.mistakes[original.mistakes.index(found)]
    return (mistake, run.at) if mistake else None


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
    progress: Progress | None,
    device: str,
    home: Path,
    console: Console | None,
    runner: Runner | None = None,
    seed: int | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[CheckResult]:
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
                if progress is not None and verdict.status != "skipped":
                    try:
                        progress.record_run(exercise.id, verdict.status, verdict.reason, verdict.figures, role=role)
                    except ProgressError as exc:
                        progress = None  # said once; the remaining verdicts are still shown
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
        reason = v.reason if v.status != "passed" else ""
        if v.details and v.status != "passed":
            reason += "\n" + "\n".join(v.details[:6])
        if v.status in ("failed", "error", "crashed", "timeout") and v.seed is not None and r.role == "learner":
            reason += "\n" + _(
                "(seed {seed}: `tutor check {id} --seed {seed}` repeats this run)", seed=v.seed, id=r.exercise.id
            )
        # Learner text (reasons quote their code and exception messages) is never markup.
        table.add_row(
            label,
            Text(_(STATUS_WORDS.get(v.status, v.status)), style=STATUS_STYLE.get(v.status, "")),
            Text(textsafe.clean(reason)),
            *((time_col, speed_col, mem_col) if figures else ()),
        )
    console.print(table)
    for r in results:
        print_output(r, console, heading=len(results) > 1)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict.status] = counts.get(r.verdict.status, 0) + 1
    console.print(_(", ").join(f"{n} {_(STATUS_WORDS.get(s, s))}" for s, n in counts.items()) or _("nothing to check"))


OUTPUT_LINES = 40


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
