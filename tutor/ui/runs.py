"""Running checks and typed-along passages: a background thread per run, progress events, verdicts.

`Runs` is a helper the main screen owns (composition, not a mixin). It knows the app only as a
`TutorHost` (a Protocol), so it never imports the app. One run at a time: starting another
cancels the one in flight, whose verdict then comes back stale and is ignored.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

from textual.widget import Widget

from tutor.course import Exercise, Passage
from tutor.i18n import N_, _
from tutor.progress import ProgressError
from tutor.runner.protocol import ERROR, Event, Verdict
from tutor.ui.background import Generations, background
from tutor.ui.host import TutorHost
from tutor.ui.messages import RunDone, RunProgress, post
from tutor.ui.widgets.results import ResultsPanel
from tutor.workspace import WorkspaceError, atomic_write


class Runs:
    def __init__(
        self,
        owner: Widget,
        host: Callable[[], TutorHost],
        results: Callable[[], ResultsPanel],
        error: Callable[[str], None],
    ) -> None:
        self.owner = owner  # runs the workers and receives RunProgress/RunDone
        self._host = host
        self._results = results
        self._error = error
        self.runs = Generations()  # the latest run; older verdicts are stale

    @property
    def running(self) -> bool:
        return self.runs.running

    def _begin(self, title: str, ran: bool = False) -> int:
        if self.runs.running:
            self._host().cancel_run()  # the old verdict comes back cancelled and is ignored
        gen = self.runs.begin()
        # Until the runner names a phase: its start (it imports torch once), or, once it is up,
        # handing the run over (a distributed check says next that it launches its processes).
        if self._host().gpus is None:
            first = N_("starting the runner")
        else:  # a passage's program has no phases of its own: it just runs
            first = N_("running your program") if ran else N_("handing your code to the runner")
        self._results().start(title, first, ran=ran)
        return gen

    def check(self, ex: Exercise) -> None:
        """Check the exercise's saved file (the caller saved it)."""
        gen = self._begin(ex.title)
        background(partial(self._check, ex, gen), "tutor-check")

    def _check(self, ex: Exercise, gen: int) -> None:
        host = self._host()
        try:
            verdict = host.runner.check(ex, host.workspace.path(ex), partial(self._event, gen))
        except Exception as exc:  # the runner must never take the UI down
            verdict = Verdict(status=ERROR, reason=_("the runner failed: {error}", error=exc))
        post(self.owner, RunDone(gen, ex, verdict))

    def run_passage(self, step: Passage, typed: str) -> bool:
        """Run the code the learner typed, as a program, so they see the example work."""
        path = self._host().home / "passages" / step.chapter_slug / f"{step.id}.py"
        try:
            atomic_write(path, typed)
        except WorkspaceError as exc:
            self._error(str(exc))
            return False
        gen = self._begin(step.title, ran=True)
        background(partial(self._run_script, step, path, gen), "tutor-run-passage")
        return True

    def _run_script(self, step: Passage, path: Path, gen: int) -> None:
        try:
            verdict = self._host().runner.run_script(path, partial(self._event, gen))
        except Exception as exc:  # the runner must never take the UI down
            verdict = Verdict(status=ERROR, reason=_("the runner failed: {error}", error=exc))
        post(self.owner, RunDone(gen, step, verdict))

    def _event(self, gen: int, event: Event) -> None:
        post(self.owner, RunProgress(gen, event))

    def progress(self, message: RunProgress) -> None:
        if self.runs.latest(message.gen):
            self._results().add_event(message.event)

    def done(self, message: RunDone) -> bool:
        """Record an exercise's verdict; True when it is the latest run's (to be shown)."""
        step, verdict = message.exercise, message.verdict
        if isinstance(step, Exercise):
            try:
                self._host().session.record(step, verdict)
            except ProgressError as exc:
                self._error(str(exc))
        return self.runs.finish(message.gen)  # False: superseded by a newer run
