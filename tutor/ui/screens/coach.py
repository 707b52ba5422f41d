"""Hints, the reference solution and reset on the main screen: Tab's ladder (a known mistake's
own hint first, then the exercise's hints, then the offer of the solution), when the solution
may be shown (the learner session's gate), and restoring the starting code. A helper the
screen owns (composition); it knows the screen only as a `CoachHost`."""

from __future__ import annotations

from typing import Protocol

from textual.app import App
from textual.notifications import SeverityLevel

from tutor.course import Exercise
from tutor.i18n import _
from tutor.progress import ProgressError
from tutor.ui.host import TutorHost
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.widgets.hints import HintPanel, code_suggestion
from tutor.ui.widgets.results import ResultsPanel
from tutor.ui.widgets.work import WorkPane
from tutor.workspace import WorkspaceError


class CoachHost(Protocol):
    work: WorkPane

    @property
    def app(self) -> App[object]: ...

    @property
    def tutor(self) -> TutorHost: ...

    @property
    def exercise(self) -> Exercise | None: ...

    def hints_used(self, ex: Exercise) -> int: ...

    def passed(self, ex: Exercise) -> bool: ...

    def save_now(self, ask: bool = True) -> bool: ...

    def refresh_status(self) -> None: ...

    def error(self, message: str) -> None: ...

    def notify(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None
    ) -> None: ...


class Coach:
    def __init__(self, screen: CoachHost) -> None:
        self.s = screen
        self.mistake: tuple[str, str] | None = None  # (exercise id, its targeted hint)

    def next_hint(self, row: int | None) -> None:
        ex = self.s.exercise
        if ex is None:
            return
        targeted = self.mistake
        if targeted and targeted[0] == ex.id:
            self.mistake = None
            panel = self.s.work.query_one(HintPanel)
            panel.show_targeted(targeted[1])
            self.s.work.editor.set_ghost(code_suggestion(targeted[1]), row)
            self.s.work.query_one(ResultsPanel).drop_next_hint()  # "Tab … shows a hint": done
            self.s.work.opened("hints")
            return
        used = self.s.hints_used(ex)
        if used >= len(ex.hints):
            self._offer_solution(ex)
            return
        try:
            used = self.s.tutor.session.use_hint(ex)
        except ProgressError as exc:
            self.s.error(str(exc))
            used += 1  # show it anyway; it just isn't recorded
        self.s.work.show_hints(ex, used, row)
        self.s.refresh_status()

    def solution(self) -> None:
        ex = self.s.exercise
        if ex is None:
            self.s.notify(_("Only exercises have a reference solution."), severity="warning")
            return
        if self.s.passed(ex):  # passed: compare freely, no hints to spend first
            self._show_solution(ex)
            return
        try:  # the session's gate: how many hints are still to be revealed first
            left = self.s.tutor.session.solution_hints_left(ex)
        except Exception:  # a read error: as if none was revealed yet
            left = len(ex.hints)
        if left > 0:
            self.s.notify(
                _("Try the hints first: Tab on an empty line reveals the next ({left} left).", left=left),
                severity="warning",
            )
            return
        self._offer_solution(ex)

    def _show_solution(self, ex: Exercise) -> None:
        self.s.save_now()
        mine = self.s.work.editor.text
        from tutor.ui.screens.solution import (
            SolutionScreen,  # dialogs load when first opened
        )

        self.s.app.push_screen(SolutionScreen(ex.title, mine, ex.solution.read_text(encoding="utf-8")))

    def _offer_solution(self, ex: Exercise) -> None:
        def answered(yes: bool | None) -> None:
            if yes and self.s.exercise == ex:
                self._show_solution(ex)

        self.s.app.push_screen(
            ConfirmScreen(
                _("That was the last of {n} hints.\nReveal the reference solution beside your code?", n=len(ex.hints)),
                yes=_("Show solution"),
                no=_("Not yet"),
            ),
            answered,
        )

    def reset(self) -> None:
        ex = self.s.exercise
        if ex is None:
            self.s.notify(_("Only exercises can be reset."), severity="warning")
            return

        def answered(yes: bool | None) -> None:
            if not yes or self.s.exercise != ex:
                return
            if not self.s.save_now():  # the backup must hold the very latest text
                self.s.notify(_("Not reset: your code could not be saved first."), severity="error")
                return
            try:
                backup = self.s.tutor.workspace.reset(ex)
            except WorkspaceError as exc:
                self.s.error(str(exc))
                return
            self.s.work.open_exercise(ex)
            self.s.work.query_one(ResultsPanel).show_idle(self.s.work.idle_text(ex))
            self.s.work.fit()
            said = _("{title} was reset to the starting code.", title=ex.title)
            if backup:
                said += " " + _("Your version was saved as {name}.", name=backup.name)
            self.s.notify(said)

        self.s.app.push_screen(
            ConfirmScreen(
                _(
                    "Reset {title} to the starting code?\nYour current version is kept in the backups folder.",
                    title=ex.title,
                ),
                yes=_("Reset"),
                no=_("Cancel"),
            ),
            answered,
        )
