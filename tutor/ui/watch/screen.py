"""The watch screen: the exercise, its file, the task in short, hints, and the results panel.

Checks run in thread workers; the file watcher runs in its own thread. Both post messages here,
and every database access happens on this (the UI) thread.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Protocol, cast

from rich.console import Group
from rich.markdown import Markdown as RichMarkdown
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from tutor.status import Status
from tutor.course import Exercise
from tutor.i18n import _
from tutor.progress import ProgressError
from tutor.runner.protocol import CANCELLED
from tutor.ui.background import Generations, background
from tutor.ui.messages import RunDone, RunnerFailed, RunnerReady, RunProgress, post
from tutor.ui.screens.solution import SolutionScreen
from tutor.steps import Snapshot, icon, needs_text, step_status
from tutor.ui.widgets.results import ResultsPanel
from tutor.external_editor import EditorError, editor_command, open_in_editor
from tutor.ui.watch.picker import ExercisePicker
from tutor.watch_session import WatchSession, ago, task_summary, verdict_of
from tutor.workspace import WorkspaceError


class WatchHost(Protocol):
    """What the screen needs from the watch app (typed so, the screen never imports the app)."""

    def watch_file(self, path: Path) -> None: ...

    def start_watching(self) -> None: ...


class WatchScreen(Screen[None]):
    # Under 32 rows the task and hints boxes shrink; under 20 they shrink more so the results
    # panel keeps room for a verdict.
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (20, "-short"), (32, "-tall")]
    AUTO_FOCUS = None

    BINDINGS = [
        # Translated once, at import: `tutor watch` has no language switch.
        Binding("h", "hint", _("Hint"), id="watch-hint", tooltip=_("Reveal the next hint (it counts as used)")),
        Binding("n", "next", _("Next"), id="watch-next", tooltip=_("Go to the next exercise")),
        Binding("p", "previous", _("Prev"), id="watch-previous", tooltip=_("Go to the previous exercise")),
        Binding(
            "r",
            "rerun",
            _("Re-run"),
            id="watch-rerun",
            tooltip=_("Check the file now (a run in flight is cancelled and restarted)"),
        ),
        Binding("l", "list", _("List"), id="watch-list", tooltip=_("Every exercise with its status")),
        Binding(
            "s",
            "solution",
            _("Solution"),
            id="watch-solution",
            tooltip=_("Your code beside the reference solution (after the hints, or after a pass)"),
        ),
        Binding("t", "task", _("Task"), id="watch-task", tooltip=_("Show the whole task, or fold it again")),
        Binding("e", "edit", _("Edit"), id="watch-edit", tooltip=_("Open the file in $VISUAL / $EDITOR")),
        Binding("q", "quit", _("Quit"), id="watch-quit", tooltip=_("Stop watching")),
    ]

    def __init__(self, session: WatchSession) -> None:
        super().__init__(id="watch")
        self.session = session
        self.runs = Generations()  # the latest check; verdicts of older ones are stale
        self.shown: Exercise | None = None  # whose verdict the results panel shows
        self.shown_passed = False
        self.history: list[tuple[str, str]] = []  # (exercise id, status) of every finished check
        self._stamp: tuple[float, int] | None = None  # the file as last seen (see _poll)

    @property
    def watch_app(self) -> WatchHost:
        return cast(WatchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static(id="watch-title")
        yield Static(id="watch-file")
        with VerticalScroll(id="watch-task-scroll"):
            yield Static(id="watch-task-text")
        with VerticalScroll(id="watch-hints"):
            yield Static(id="watch-hints-text")
        yield ResultsPanel(id="results")
        yield Footer()

    def on_resize(self) -> None:
        self._show_header(self.session.current)

    def on_mount(self) -> None:
        self.arrive(self.session.current)
        self.watch_app.start_watching()
        # A safety net under the watcher: file systems without change events (network mounts,
        # some containers) still get every save checked, a second late at most.
        self.set_interval(1.0, self._poll)
        self._warm_up()

    def _poll(self) -> None:
        ex = self.session.current
        stamp = self.session.stamp(ex)
        if stamp is not None and stamp != self._stamp:
            self._stamp = stamp
            self.file_saved(self.session.path(ex))

    # -- the exercise ---------------------------------------------------------------------------

    def arrive(self, ex: Exercise, keep_results: bool = False) -> None:
        """Show `ex`: title, file, task and hints; the results panel shows its last verdict,
        checks it if it changed since, or waits for a save. `keep_results` leaves the panel
        alone (a pass just moved us here: its verdict stays in view)."""
        self.watch_app.watch_file(self.session.path(ex))
        self._stamp = self.session.stamp(ex)
        self.remove_class("-task-full")
        self._show_header(ex)
        self._show_task(ex)
        self._show_hints(ex)
        if keep_results:
            return
        results = self.query_one(ResultsPanel)
        try:
            arrival = self.session.arrival(ex)
        except UnicodeDecodeError:
            self.notify(
                _("{name} is not UTF-8 text: save it as UTF-8 in your editor.", name=self.session.path(ex).name),
                severity="error",
            )
            results.show_idle(self._idle_text(ex))
            return
        except (ProgressError, WorkspaceError, OSError) as exc:
            self.notify(str(exc), severity="error")
            results.show_idle(self._idle_text(ex))
            return
        if arrival.action == "history" and arrival.last is not None:
            self.shown, self.shown_passed = ex, arrival.last.status == Status.PASSED
            results.show_verdict(verdict_of(arrival.last), f"{ex.title}  (last check, {ago(arrival.last.at)})")
        elif arrival.action == "check":
            self.check_now()
        else:
            self.shown, self.shown_passed = None, False
            results.show_idle(self._idle_text(ex))

    def _show_header(self, ex: Exercise) -> None:
        try:
            snap = Snapshot(self.session.progress.all_exercises(), set(), self.session.gpus)
        except ProgressError:
            snap = Snapshot({}, set(), self.session.gpus)
        title = Text.assemble(
            (f"{icon(step_status(ex, snap))} {ex.title}", "bold"), (f"   {self.session.place(ex)}", "dim")
        )
        if len(title) > self.size.width - 2:  # narrow terminal: `ch 2 · 1/4`
            chapter_ = self.session.chapter(ex)
            title = Text.assemble(
                (f"{icon(step_status(ex, snap))} {ex.title}", "bold"),
                (f"  ch {chapter_.number} · {chapter_.exercises.index(ex) + 1}/{len(chapter_.exercises)}", "dim"),
            )
        chapter = f" · {self.session.chapter(ex).title}"
        if len(title) + len(chapter) <= self.size.width - 2:  # one line, even at 80 columns
            title.append(chapter, style="dim")
        self.query_one("#watch-title", Static).update(title)
        path = self.session.path(ex)
        shown = str(path)
        home = str(Path.home())
        if shown.startswith(home + os.sep):
            shown = "~" + shown[len(home) :]
        # A terminal hyperlink (click or Ctrl+click where supported). A path too long for one
        # line folds without the label, rather than leaving the label alone on a line.
        line = Text(shown, style=Style(link=path.as_uri(), underline=True))
        if len(shown) + 6 <= self.size.width - 2:
            line = Text.assemble(("file  ", "dim"), line)
        self.query_one("#watch-file", Static).update(line)

    def _show_task(self, ex: Exercise) -> None:
        """The task in short (from where it names the file), or all of it while `t` unfolds it."""
        full = self.has_class("-task-full")
        try:
            guide = ex.text()
        except OSError as exc:
            guide = _("(cannot read the task: {error})", error=exc.strerror or exc)
        summary, cut = task_summary(guide, ex.stub.name)
        text = task_summary(guide)[0] if full else summary
        scroll = self.query_one("#watch-task-scroll", VerticalScroll)
        scroll.border_title = (
            _("Task  ·  t folds it")
            if full
            else (_("Task, in short  ·  t shows all of it") if cut else _("Task  ·  t unfolds it"))
        )
        self.query_one("#watch-task-text", Static).update(RichMarkdown(text))
        scroll.scroll_home(animate=False)

    def _idle_text(self, ex: Exercise) -> str:
        text = _("Edit {name} in your editor and save: every save is checked here.", name=self.session.path(ex).name)
        runs, why = self.session.runs_here(ex)
        if not runs:
            if why == ex.needs.describe():  # the plain reason: say it in the learner's language
                why = needs_text(ex.needs)
            text += "\n" + _("This exercise {why}: here its check is skipped (n: next exercise).", why=why)
        return text

    def _show_hints(self, ex: Exercise) -> None:
        box = self.query_one("#watch-hints", VerticalScroll)
        try:
            revealed = self.session.hints_used(ex)
        except ProgressError:
            revealed = 0
        box.set_class(revealed > 0, "-visible")
        if not revealed:
            return
        # Newest first, so the hint just asked for is in view even in a short box.
        left = len(ex.hints) - revealed
        parts: list[RichMarkdown] = []  # hints are Markdown (`code`), as in the app's hint panel
        for i in range(revealed, 0, -1):
            parts.append(
                RichMarkdown(
                    f"**{_('Hint {i}/{n}', i=i, n=len(ex.hints))}:** {ex.hints[i - 1]}",
                    style="" if i == revealed else "dim",
                )
            )
        box.border_title = (
            _("Hints  ·  h: the next ({left} left)", left=left)
            if left
            else _("Hints  ·  no more: s shows the reference solution beside your code")
        )
        self.query_one("#watch-hints-text", Static).update(Group(*parts))
        box.scroll_home(animate=False)

    def go_to(self, ex: Exercise, keep_results: bool = False) -> None:
        try:
            self.session.go_to(ex)
        except (ProgressError, WorkspaceError) as exc:
            self.notify(str(exc), severity="error")
        self.arrive(ex, keep_results=keep_results)

    # -- checks ---------------------------------------------------------------------------------

    def check_now(self) -> None:
        """Check the current file; a check still in flight is cancelled (its verdict is dropped)."""
        ex = self.session.current
        if self.runs.running:
            self.session.cancel()
        self.session.note_checking(ex)
        self._stamp = self.session.stamp(ex)
        gen = self.runs.begin()
        self.shown, self.shown_passed = None, False
        if self.has_class("-task-full"):  # the verdict must be in view
            self.remove_class("-task-full")
            self._show_task(ex)
        self.query_one(ResultsPanel).start(ex.title)
        self._check(ex, gen)

    def _check(self, ex: Exercise, gen: int) -> None:
        def work() -> None:
            verdict = self.session.check(ex, lambda event: post(self, RunProgress(gen, event)))
            post(self, RunDone(gen, ex, verdict))

        background(work, "tutor-watch-check")

    def _warm_up(self) -> None:
        def work() -> None:
            try:
                post(self, RunnerReady(self.session.warm_up()))
            except Exception as exc:  # RunnerError, OSError: the first check will say it again
                post(self, RunnerFailed(str(exc)))

        background(work, "tutor-watch-warm-up")

    def on_runner_failed(self, message: RunnerFailed) -> None:
        message.stop()
        self.notify(_("The runner could not start: {reason}", reason=message.reason), severity="error", timeout=10)

    def on_runner_ready(self, message: RunnerReady) -> None:
        message.stop()
        self.session.gpus = message.gpus
        self._show_header(self.session.current)
        if self.shown is None and not self.runs.running:
            self.query_one(ResultsPanel).show_idle(self._idle_text(self.session.current))

    def file_saved(self, path: Path) -> None:
        """The watcher saw a save: check it, unless it is another file or nothing changed."""
        ex = self.session.current
        if not path.exists():  # deleted (or mid-save): wait for the file to come back
            return
        self._stamp = self.session.stamp(ex)
        if os.path.realpath(path) != os.path.realpath(self.session.path(ex)) or not self.session.changed_since_check(
            ex
        ):
            return
        self.check_now()

    def on_run_progress(self, message: RunProgress) -> None:
        if self.runs.latest(message.gen):
            self.query_one(ResultsPanel).add_event(message.event)

    def on_run_done(self, message: RunDone) -> None:
        ex, verdict = message.exercise, message.verdict
        assert isinstance(ex, Exercise)  # watch runs no passages
        try:
            self.session.record(ex, verdict)
        except ProgressError as exc:
            self.notify(str(exc), severity="error")
        if verdict.status != CANCELLED:
            self.history.append((ex.id, verdict.status))
        if not self.runs.finish(message.gen):
            return  # a newer check replaced this one
        if ex != self.session.current:  # the learner moved on while it ran
            if verdict.status != CANCELLED:
                self.notify(f"{ex.title}: {verdict.status}", timeout=4)
            return
        self.shown, self.shown_passed = ex, verdict.passed
        results = self.query_one(ResultsPanel)
        # Which check this is and when it ended: a re-check with the same verdict still shows
        # that it ran (the headline's counter and clock move on).
        n = sum(1 for done, status in self.history if done == ex.id)
        title = f"{ex.title}  ·  " + _("check {n} at {time}", n=n, time=time.strftime("%H:%M:%S"))
        if not verdict.passed:
            results.show_verdict(verdict, title)
            self._show_header(ex)
            return
        following = self.session.after_pass(ex)
        if following is None:
            results.show_verdict(verdict, title, _("Every exercise that runs here has passed!"))
            self._show_header(ex)
            self.notify(_("✔ {title} passed: that was the last one to do.", title=ex.title), title=_("Well done!"))
            return
        results.show_verdict(
            verdict, title, _("Next: {title} (p goes back, s shows the reference solution)", title=following.title)
        )
        self.notify(
            _("✔ {title} passed. Now watching {name}.", title=ex.title, name=self.session.path(following).name),
            title=_("Well done!"),
            timeout=6,
        )
        self.go_to(following, keep_results=True)

    # -- keys -----------------------------------------------------------------------------------

    def action_hint(self) -> None:
        ex = self.session.current
        try:
            if not self.session.reveal_hint():
                self.notify(
                    _("All {n} hints are shown. s shows the reference solution beside your code.", n=len(ex.hints))
                )
        except ProgressError as exc:
            self.notify(str(exc), severity="error")
        self._show_hints(ex)
        self._show_header(ex)

    def _move(self, delta: int) -> None:
        ex = self.session.neighbour_exercise(delta)
        if ex is None:
            self.notify(_("This is the last exercise.") if delta > 0 else _("This is the first exercise."))
            return
        self.go_to(ex)

    def action_next(self) -> None:
        self._move(+1)

    def action_previous(self) -> None:
        self._move(-1)

    def action_rerun(self) -> None:
        self.check_now()

    def action_list(self) -> None:
        snap = Snapshot(self.session.progress.all_exercises(), set(), self.session.gpus)

        def chosen(exercise_id: str | None) -> None:
            if exercise_id and exercise_id != self.session.current.id:
                self.go_to(self.session.course.exercise(exercise_id))

        self.app.push_screen(ExercisePicker(self.session.course, self.session.current, snap), chosen)

    def action_solution(self) -> None:
        # Just after a pass the panel shows the exercise that passed: its solution is the one
        # worth comparing, even though watching has moved on to the next file.
        ex = self.shown if self.shown is not None and self.shown_passed else self.session.current
        try:
            refusal = self.session.solution_refusal(ex)
            mine = self.session.text(ex)
            reference = ex.solution.read_text(encoding="utf-8")
        except (ProgressError, WorkspaceError, OSError, UnicodeDecodeError) as exc:
            self.notify(str(exc), severity="error")
            return
        if refusal:
            self.notify(refusal, severity="warning")
            return
        self.app.push_screen(SolutionScreen(ex.title, mine, reference))

    def action_task(self) -> None:
        self.toggle_class("-task-full")
        self._show_task(self.session.current)

    def action_edit(self) -> None:
        path = self.session.path()
        try:
            command = editor_command()
            if command is None:
                self.notify(
                    _("Set $VISUAL or $EDITOR to open files from here. The file: {path}", path=path), timeout=10
                )
                return
            # A terminal editor takes over this terminal until it exits; saves made in it are
            # seen by the watcher and checked when we are back.
            with self.app.suspend():
                open_in_editor(command, path)
        except EditorError as exc:
            self.notify(str(exc), severity="error")
        except SuspendNotSupported:  # no real terminal (a test, a web driver)
            self.notify(_("cannot open an editor from here. The file: {path}", path=path), severity="warning")

    def action_quit(self) -> None:
        self.app.exit(0)
