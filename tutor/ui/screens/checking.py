"""Running checks: a thread worker per run, progress events, verdicts into the results panel.

A mixin of MainScreen (handlers are `on_*` methods, which Textual finds through the MRO).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from tutor.course import Exercise, Passage
from tutor.progress import ProgressError
from tutor.workspace import WorkspaceError, atomic_write
from tutor.runner.protocol import CANCELLED, ERROR, Verdict
from tutor.ui.messages import RunDone, RunProgress, post
from tutor.ui.widgets.results import ResultsPanel

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp


class CheckingMixin:
    """Ctrl+R/F5: save, then check the exercise's file with the app's Runner."""

    tutor: "TutorApp"  # the rest (exercise, save_now, error...) comes from MainScreen
    _run_gen = 0       # the latest run; older verdicts are stale
    _running = False

    def action_run(self) -> None:
        if isinstance(self.step, Passage):
            self._run_passage(self.step)
            return
        ex = self.exercise
        if ex is None:
            self.notify("This step has nothing to check: exercises do.", severity="warning")
            return
        if not self.save_now():
            self.notify("Not checked: your code could not be saved first.", severity="error")
            return
        if self._running:
            self.tutor.cancel_run()  # the old verdict comes back cancelled and is ignored
        self._run_gen += 1
        self._running = True
        self.query_one(ResultsPanel).start(ex.title)
        self._check(ex, self._run_gen)

    @work(thread=True, group="check", exit_on_error=False)
    def _check(self, ex: Exercise, gen: int) -> None:
        app = self.tutor
        try:
            verdict = app.runner.check(ex, app.workspace.path(ex),
                                       lambda event: post(self, RunProgress(gen, event)))
        except Exception as exc:  # the runner must never take the UI down
            verdict = Verdict(status=ERROR, reason=f"the runner failed: {exc}")
        post(self, RunDone(gen, ex, verdict))

    def _run_passage(self, step: Passage) -> None:
        """Run the code the learner typed, as a program, so they see the example work."""
        from tutor.ui.widgets.typealong import TypeAlong

        typed = [w for w in self.query(TypeAlong) if w.session.finished]
        if not typed:
            self.notify("Finish typing the passage first; then Ctrl+R runs what you typed.",
                        severity="warning")
            return
        path = self.tutor.home / "passages" / step.chapter_slug / f"{step.id}.py"
        try:
            atomic_write(path, typed[0].typed_text)
        except WorkspaceError as exc:
            self.error(str(exc))
            return
        if self._running:
            self.tutor.cancel_run()
        self._run_gen += 1
        self._running = True
        self.add_class("-passage-run")
        self.query_one(ResultsPanel).start(step.title)
        self._run_script(step, path, self._run_gen)

    @work(thread=True, group="check", exit_on_error=False)
    def _run_script(self, step: Passage, path: Path, gen: int) -> None:
        try:
            verdict = self.tutor.runner.run_script(path, lambda event: post(self, RunProgress(gen, event)))
        except Exception as exc:  # the runner must never take the UI down
            verdict = Verdict(status=ERROR, reason=f"the runner failed: {exc}")
        post(self, RunDone(gen, step, verdict))

    def on_run_progress(self, message: RunProgress) -> None:
        if message.gen == self._run_gen:
            self.query_one(ResultsPanel).add_event(message.event)

    def on_run_done(self, message: RunDone) -> None:
        ex, verdict = message.exercise, message.verdict
        if isinstance(ex, Passage):
            if message.gen == self._run_gen:
                self._running = False
                if self.step == ex:
                    self.query_one(ResultsPanel).show_verdict(verdict, ex.title)
            return
        if verdict.status != CANCELLED:
            try:
                self.tutor.progress.record_run(ex.id, verdict.status, verdict.reason, verdict.figures)
            except ProgressError as exc:
                self.error(str(exc))
        if message.gen != self._run_gen:
            return  # superseded by a newer run
        self._running = False
        self.refresh_status()
        if self.step != ex:
            if verdict.status != CANCELLED:
                self.notify(f"{ex.title}: {verdict.status}", timeout=4)
            return
        self.show_verdict(ex, verdict)

    def show_verdict(self, ex: Exercise, verdict: Verdict) -> None:
        last = self.chapter is not None and self.chapter.steps[-1] == ex
        hint = "Ctrl+O picks the next chapter." if last else "Ctrl+N: next step."
        self.query_one(ResultsPanel).show_verdict(verdict, ex.title, hint if verdict.passed else "")
        if verdict.passed:
            self.notify(f"✔ {ex.title} passed. {hint}", title="Well done!", timeout=6)
