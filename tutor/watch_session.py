"""What `tutor watch` is doing, without a screen: which exercise, its file, hints, checks.

Plain Python (no Textual, no torch) so the whole flow is testable with a fake runner. Progress,
hints and run history live in the same `Progress` store the app and the CLI use. Every method
runs on the caller's thread; only `check` blocks (call it from a worker thread) and it never
touches the database, whose connection belongs to the thread that opened it.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from tutor.course import Chapter, Course, Exercise
from tutor.i18n import N_, _
from tutor.progress import Progress, RunRecord
from tutor.runner.protocol import ERROR, Event, Verdict
from tutor.session import LearnerSession
from tutor.workspace import Workspace, WorkspaceError


class RunnerLike(Protocol):
    """The part of tutor.runner.client.Runner that watch mode uses (tests pass a fake)."""

    def check(
        self, exercise: Exercise, code: Path, on_event: Callable[[Event], None] | None = None, seed: int | None = None
    ) -> Verdict: ...

    def cancel(self) -> bool: ...

    def close(self) -> None: ...

    def start(self) -> Any: ...  # returns something with `.gpus` (MachineInfo)


@dataclass(frozen=True)
class Arrival:
    """What to show when the learner arrives at an exercise.

    `check`: the file changed since its last check, so check it now; `history`: show the last
    recorded verdict (the file has not changed since); `idle`: the untouched stub, wait for a save."""

    action: str
    last: RunRecord | None = None


class WatchSession(LearnerSession):
    """The learner's session (rules in LearnerSession) plus what watching adds: the exercise
    watched, its file's text as last checked, and the runner."""

    progress: Progress  # watch always has its store

    def __init__(
        self,
        course: Course,
        progress: Progress,
        workspace: Workspace,
        runner_factory: Callable[[], RunnerLike],
        start: Exercise,
        device: str = "auto",
    ) -> None:
        super().__init__(course, progress, device)
        self.workspace = workspace
        self.exercises = course.exercises
        self.index = self.exercises.index(start)
        self._runner_factory = runner_factory
        self._runner: RunnerLike | None = None
        self._runner_lock = threading.Lock()
        self._checked: dict[str, str] = {}  # exercise id -> the text its latest check was given

    # -- where we are ---------------------------------------------------------------------------

    @property
    def current(self) -> Exercise:
        return self.exercises[self.index]

    @property
    def runner(self) -> RunnerLike:
        with self._runner_lock:  # the warm-up and the first check may ask at once
            if self._runner is None:
                self._runner = self._runner_factory()
            return self._runner

    def path(self, exercise: Exercise | None = None) -> Path:
        """The learner's file, absolute (it is what an editor opens and what a link points at)."""
        return Path(os.path.abspath(self.workspace.path(exercise or self.current)))

    def chapter(self, exercise: Exercise | None = None) -> Chapter:
        return self.course.chapter_of(exercise or self.current)

    def place(self, exercise: Exercise | None = None) -> str:
        """`chapter 2 · exercise 1/4`."""
        ex = exercise or self.current
        chapter = self.chapter(ex)
        return _(
            "chapter {number} · exercise {i}/{n}",
            number=chapter.number,
            i=chapter.exercises.index(ex) + 1,
            n=len(chapter.exercises),
        )

    def go_to(self, exercise: Exercise) -> None:
        """Make `exercise` current and remember it, so `tutor check`, `tutor start` and the next
        `tutor watch` continue here. Raises ProgressError when the position cannot be saved."""
        self.index = self.exercises.index(exercise)
        if not self.path(exercise).exists():  # recreate a deleted file from its stub to watch it
            self.workspace.read(exercise)
        super().go_to(exercise)

    def neighbour_exercise(self, delta: int) -> Exercise | None:
        return self.next_exercise(self.current, delta)

    # -- hints and the solution -----------------------------------------------------------------

    def reveal_hint(self) -> bool:
        """Reveal the current exercise's next hint (it counts as used, as everywhere);
        False when every hint is already shown."""
        ex = self.current
        if self.hints_used(ex) >= len(ex.hints):
            return False
        self.use_hint(ex)
        return True

    def solution_refusal(self, exercise: Exercise) -> str | None:
        """Why the reference solution is not shown yet, or None when it may be."""
        left = self.solution_hints_left(exercise)
        if left > 0:
            return _("The solution opens after the hints (h reveals the next, {left} left) or after a pass.", left=left)
        return None

    # -- checks ---------------------------------------------------------------------------------

    def arrival(self, exercise: Exercise) -> Arrival:
        runs = [r for r in self.progress.runs(exercise.id, limit=20) if r.role == "learner"]
        last = runs[0] if runs else None
        try:
            mtime = self.path(exercise).stat().st_mtime
        except OSError:
            mtime = time.time()
        if last is not None and mtime <= last.at:
            self._checked[exercise.id] = self.text(exercise)  # saving it unchanged re-checks nothing
            return Arrival("history", last)
        if self.workspace.is_modified(exercise):
            return Arrival("check", last)
        return Arrival("idle", last)

    def text(self, exercise: Exercise) -> str:
        return self.workspace.read(exercise)

    def changed_since_check(self, exercise: Exercise) -> bool:
        """False when the file holds exactly what was last checked: an editor that saves
        without a change (or touches the file) does not start a run."""
        try:
            return self.text(exercise) != self._checked.get(exercise.id)
        except (OSError, UnicodeDecodeError):
            return True  # the check will say what is wrong with the file

    def stamp(self, exercise: Exercise) -> tuple[float, int] | None:
        """The file's (mtime, size), or None when it cannot be read (deleted mid-save)."""
        try:
            st = self.path(exercise).stat()
        except OSError:
            return None
        return st.st_mtime, st.st_size

    def note_checking(self, exercise: Exercise) -> None:
        """Remember the text a check is about to get (on the UI thread, before the worker
        starts, so a second report of the same save is recognised at once)."""
        try:
            self._checked[exercise.id] = self.text(exercise)
        except (OSError, UnicodeDecodeError, WorkspaceError):
            self._checked.pop(exercise.id, None)

    def check(self, exercise: Exercise, on_event: Callable[[Event], None] | None = None) -> Verdict:
        """Check the learner's file (blocks; a worker thread calls this). Never raises."""
        try:
            self._checked[exercise.id] = self.text(exercise)
        except UnicodeDecodeError:
            return Verdict(
                status=ERROR,
                reason=_("{name} is not UTF-8 text: save it as UTF-8 in your editor", name=self.path(exercise).name),
            )
        except (OSError, WorkspaceError) as exc:
            return Verdict(status=ERROR, reason=_("cannot read {name}: {error}", name=self.path(exercise), error=exc))
        try:
            return self.runner.check(exercise, self.path(exercise), on_event)
        except Exception as exc:  # the runner must never take the screen down
            return Verdict(status=ERROR, reason=_("the runner failed: {error}", error=exc))

    def warm_up(self) -> int:
        """Start the runner's process (it imports torch); return how many GPUs it sees.
        Blocks: call from a worker thread. Raises RunnerError or OSError."""
        return int(self.runner.start().gpus)

    def cancel(self) -> None:
        if self._runner is not None:
            self._runner.cancel()

    def close(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            self._runner.close()
            self._runner = None


def verdict_of(record: RunRecord) -> Verdict:
    """A verdict read back from the run history (reason and figures; output is not kept)."""
    return Verdict(status=record.status, reason=record.reason, figures=dict(record.figures))


def ago(ts: float, now: float | None = None) -> str:
    delta = max(0.0, (now or time.time()) - ts)
    for unit, size in ((N_("{n} d ago"), 86400), (N_("{n} h ago"), 3600), (N_("{n} min ago"), 60)):
        if delta >= size:
            return _(unit, n=int(delta // size))
    return _("just now")


def task_summary(markdown: str, filename: str = "") -> tuple[str, bool]:
    """The task in short: the guide text from the first paragraph that names the learner's file
    (`Open sigmoid.py and complete ...`), else from the top; without the title heading (shown
    above it). Also whether text before it was left out."""
    lines = markdown.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    start, fenced, blank = 0, False, True
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and blank and filename and filename in line and line.strip():
            start = i
            break
        blank = not line.strip() and not fenced
    return "\n".join(lines[start:]).strip(), start > 0 and any(x.strip() for x in lines[:start])
