"""The main screen: composition and routing. It lays out the title bar, the step navigator,
the guide, the work pane (tutor/ui/widgets/work.py) and the key bar, and routes keys and
messages to the helpers that do the work: the layout by step kind (main_layout.py), saving
(tutor/ui/saving.py), running checks (tutor/ui/runs.py), the learning rules (the app's
LearnerSession). The keys are declared in main_keys.py. The app is known only as a
`TutorHost`, so nothing here imports tutor.ui.app.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from tutor import gcpause, i18n
from tutor.course import Chapter, Exercise, Passage, Step
from tutor.i18n import N_, _
from tutor.progress import ProgressError
from tutor.runner.protocol import Verdict
from tutor.status import Status, status_word
from tutor.steps import chapter_progress_label, icon, step_status
from tutor.ui.host import TutorHost
from tutor.ui.messages import RunDone, RunProgress, SaveDone
from tutor.ui.prefs import Prefs
from tutor.ui.runs import Runs
from tutor.ui.saving import Saver
from tutor.ui.screens import main_keys
from tutor.ui.screens.coach import Coach
from tutor.ui.screens.main_layout import SplitLayout
from tutor.ui.widgets.guide import GuideView
from tutor.ui.widgets.keybar import KeyBar
from tutor.ui.widgets.navigator import StepNavigator
from tutor.ui.widgets.results import ResultsPanel
from tutor.ui.widgets.title_bar import TitleBar
from tutor.ui.widgets.work import WorkPane

if TYPE_CHECKING:
    from tutor.ui.widgets.editor import CodeEditor

MIN_WIDTH, MIN_HEIGHT = 50, 14


class MainScreen(Screen[None]):
    # Below 70 columns the panes stack; short terminals get smaller panels.
    HORIZONTAL_BREAKPOINTS = [(0, "-tiny"), (70, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    # We focus the right widget per step ourselves. "" turns Textual's auto-focus off (None
    # would inherit the app's "*", which focused the navigator first): every focus change
    # restyles the screen and recomposes the Footer, ~80 ms of the first paint each.
    AUTO_FOCUS = ""

    BINDINGS = main_keys.BINDINGS

    def __init__(self, chapter: int, step_id: str | None) -> None:
        super().__init__(id="main")
        self._start = (chapter, step_id)
        self.chapter: Chapter | None = None
        self.step: Step | None = None
        self.work = WorkPane(id="work-pane")  # filled after the first paint (work.build)
        self.saver = Saver(self, lambda: self.work.editor, lambda: self.tutor.progress, self.error, self.refresh_status)
        self.runs = Runs(self, lambda: self.tutor, lambda: self.query_one(ResultsPanel), self.error)
        self.prefs = Prefs(lambda: self.tutor.progress, self.error)
        self.coach = Coach(self)
        self.panes = SplitLayout(self, self.prefs, self.kind, lambda: self._resumed, lambda: self.work.fit())
        self._painted = False  # the first frame is up
        self._resumed = False  # Textual has styled the screen once (it does so on resume)
        self._last_error = ("", 0.0)

    @property
    def tutor(self) -> TutorHost:
        return cast(TutorHost, self.app)

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # One Static, not Textual's Header (three widgets and a clock slot): a lighter first paint.
        yield TitleBar(id="title-bar", ended=lambda: self.call_after_refresh(self.work.fit))
        yield Static(id="step-title")
        with Horizontal(id="body"):
            yield StepNavigator(id="navigator")
            with Vertical(id="guide-pane"):
                with VerticalScroll(id="guide-scroll"):
                    yield GuideView(id="guide")
            # Built after the first paint: a reading step's first frame does without the editor.
            yield self.work
        yield Static(id="too-small")
        yield KeyBar(id="keys", shows=self.in_key_bar)

    def on_resize(self, event: events.Resize) -> None:
        # Below this size the panes cannot show code and guide legibly: say so instead of
        # drawing a broken layout. Nothing is lost; the editor keeps its text behind it.
        width, height = event.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.set_class(small, "-too-small")
        if small:
            self.query_one("#too-small", Static).update(
                _(
                    "Terminal too small ({width}x{height}): tutor needs at least {min_width}x{min_height}. "
                    "Enlarge the window; your work is saved.",
                    width=width,
                    height=height,
                    min_width=MIN_WIDTH,
                    min_height=MIN_HEIGHT,
                )
            )
        if self.step is not None:
            self.panes.apply()

    def kind(self) -> str:
        return (
            "exercise" if isinstance(self.step, Exercise) else "passage" if isinstance(self.step, Passage) else "read"
        )

    def _breakpoint_classes(self) -> None:
        """The size classes Textual sets on the first Resize, set before the first layout
        instead: set after it, they restyle and lay out the whole screen a second time."""
        width, height = self.app.size
        for dimension, points in ((width, self.HORIZONTAL_BREAKPOINTS), (height, self.VERTICAL_BREAKPOINTS)):
            names = [name for _, name in points or ()]
            hit = next((name for point, name in sorted(points or (), reverse=True) if dimension >= point), None)
            for name in names:
                self.set_class(name == hit, name, update=False)

    async def on_mount(self) -> None:
        self._breakpoint_classes()
        chapter, step_id = self._start
        if isinstance(self._resolve(chapter, step_id)[1], (Exercise, Passage)):
            await self.work.build()  # the first screen shows the editor: build it first
        self.open_chapter(chapter, step_id)
        self.set_interval(1.0, self.saver.watch_disk)
        notice = self.tutor.progress.notice
        if notice:
            self.notify(notice, severity="warning", timeout=15)
        # Once the first frame is up: the work pane, then warm the runner (it imports torch
        # in its own process).
        self.call_after_refresh(self._after_first_paint)

    def _after_first_paint(self) -> None:
        self._painted = True
        if gcpause.resume():  # the launcher paused the collector for start-up (tutor/gcpause.py)
            self.set_timer(2.0, gcpause.settle)
        self.tutor.warm_up()
        self.set_timer(0.2, self.query_one("#guide", GuideView).highlight_code)
        # The work pane after the next frame (the one that fills in the key bar): mounting
        # the editor and panels first (~12 ms) held that frame back. The app's queue, so
        # it runs after callbacks queued there before it.
        self.app.call_after_refresh(self.work.build)

    # -- footer by step kind --------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Ctrl+R is Check, and Run on a passage: the one disabled lets the key through.
        if action == "run":
            return self.kind() != "passage"
        if action == "run_passage":
            return self.kind() == "passage"
        return True

    def in_key_bar(self, binding: Binding) -> bool:
        """Whether the key bar lists `binding` on this step (the key works everywhere)."""
        if binding.action == "run_passage":
            return self.kind() == "passage" and self.work.typed_passage() is not None
        kinds = main_keys.FOOTER.get(binding.action)
        return kinds is None or self.kind() in kinds

    # -- where we are ---------------------------------------------------------------------------

    @property
    def exercise(self) -> Exercise | None:
        return self.step if isinstance(self.step, Exercise) else None

    def _resolve(self, number: int, step_id: str | None) -> tuple[Chapter, Step, bool]:
        return self.tutor.session.resolve(number, step_id, self.tutor.snapshot)

    def open_chapter(self, number: int, step_id: str | None = None) -> None:
        """Open chapter `number` at `step_id`, else where the learner was, else its start."""
        chapter, step, unknown = self._resolve(number, step_id)
        if unknown:
            self.notify(
                _("There is no chapter {number}; opening chapter {chapter}.", number=number, chapter=chapter.number),
                severity="warning",
            )
        self.go_to(step)

    def go_to(self, step: Step) -> bool:
        """Show `step` (of any chapter): save the current file first, then guide, navigator,
        work area. False when the learner must first answer a question about their file."""
        if isinstance(step, (Exercise, Passage)) and not self.work.built:

            async def when_built() -> None:  # only in the moment after the first paint
                await self.work.build()
                self.go_to(step)

            self.run_worker(when_built(), group="build-work")
            return True
        if not self.leave_exercise():
            return False
        chapter = self.tutor.course.chapter_of(step)
        if self.chapter is not None and chapter.number != self.chapter.number:
            self.notify(_("Chapter {number}: {title}", number=chapter.number, title=chapter.title), timeout=3)
        self.chapter = chapter
        self.step = step
        try:  # (a write waits for the disk: skip it when `tutor start` just stored this)
            if self.tutor.last_position() != (chapter.number, step.id):
                self.tutor.progress.set_position(chapter.number, step.id)
        except ProgressError as exc:
            self.error(str(exc))
        self.query_one("#guide", GuideView).show(step.text())
        self.query_one("#guide-scroll", VerticalScroll).scroll_home(animate=False)
        self.refresh_status()
        self.work.show(step)
        self.panes.apply()
        self.work.fit()
        if self._painted:  # the new title may wrap to another row: fit again once it is laid out
            self.call_after_refresh(self.work.fit)
        self.refresh_bindings()
        return True

    def refresh_status(self) -> None:
        """Navigator icons, the current-step line and the header's progress figures."""
        if self.chapter is None or self.step is None:
            return
        snap = self.tutor.snapshot()
        self.query_one(StepNavigator).show(self.chapter, self.step.id, snap)
        n = self.chapter.steps.index(self.step) + 1
        status = step_status(self.step, snap)
        line = f"{icon(status)} " + _("Step {n}/{total}", n=n, total=len(self.chapter.steps))
        line += f" · {self.step.title}"
        if isinstance(self.step, Exercise):
            line += f"  ·  id: {self.step.id}"
        self.query_one("#step-title", Static).update(line)
        self.tutor.update_header(self.chapter, snap)
        self.query_one(TitleBar).header = f"{self.app.title} — {chapter_progress_label(self.chapter, snap)}"

    def show_notice(self, message: str, severity: str, timeout: float) -> None:
        """A notice in place of the title bar (the app's notify comes here while this screen
        is on top): a toast in the corner covered the results, the diff or the newest hint."""
        self.query_one(TitleBar).show_notice(message, severity, timeout)
        self.call_after_refresh(self.work.fit)

    def place_focus(self, widget: Widget) -> None:
        """Focus `widget`; before the first frame at once, so the first layout already has the
        focus styles (Widget.focus defers it, which restyled and laid out the screen again)."""
        if self._painted:
            widget.focus()
        else:
            self.set_focus(widget, scroll_visible=False)

    def on_type_along_finished(self) -> None:
        self.refresh_status()
        self.refresh_bindings()  # Ctrl+R runs the typed passage now

    def on_type_along_completed(self) -> None:
        self.refresh_status()

    # -- keys that must always land somewhere ----------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """On an exercise, typing goes to the editor wherever focus is (no dialog is open when
        the screen gets the key)."""
        if self.exercise is None:
            return
        editor = self.work.editor
        if self.has_class("-zoom-guide"):  # the editor is hidden: Esc brings it back
            if event.key == "escape":
                event.stop()
                self.panes.unzoom()
                editor.focus()
            return
        if (
            self.exercise is not None
            and event.is_printable
            and event.character
            and self.focused is not editor
            and not editor.read_only
            and editor.display
        ):
            event.stop()
            editor.focus()
            editor.type_text(event.character)
        elif event.key == "escape" and self.exercise is not None and self.focused is not editor:
            event.stop()
            editor.focus()  # Esc from the guide or a panel: back to the code

    def action_toggle_panels(self) -> None:
        self.work.toggle_panels()

    def action_scroll_panel(self, direction: int) -> None:
        self.work.scroll_panel(direction)

    # -- the layout keys --------------------------------------------------------------------------

    def action_zoom(self) -> None:
        if self.kind() == "read":
            self.notify(_("Reading steps already give the guide the whole width."), timeout=3)
            return
        nxt = self.panes.next_zoom()
        if nxt == "guide":
            self.query_one("#guide-scroll").focus()
        elif self.exercise is not None:
            self.query_one("#editor").focus()
        words = {
            "split": _("Zoom: guide and work side by side (F4 again to change)."),
            "guide": _("Zoom: the guide, full width (F4 again to change)."),
            "work": _("Zoom: the work, full width (F4 again to change)."),
        }
        self.notify(words[nxt], timeout=2)

    def action_split(self, direction: int) -> None:
        if self.kind() != "read":
            self.panes.move_split(direction)

    def action_toggle_navigator(self) -> None:
        if self.panes.toggle_navigator():
            self.query_one(StepNavigator).focus()
        elif self.exercise is not None:
            self.query_one("#editor").focus()

    # -- saving (the Saver does the work) ---------------------------------------------------------

    def on_text_area_changed(self, event: CodeEditor.Changed) -> None:
        if event.text_area.id == "editor":
            self.saver.text_changed()

    def on_save_done(self, message: SaveDone) -> None:
        self.saver.save_done(message)

    def save_now(self, ask: bool = True) -> bool:
        return self.saver.save_now(ask)

    def leave_exercise(self) -> bool:
        self.work.remember_cursor()
        return self.saver.leave()

    def save_for_quit(self) -> str:
        self.work.remember_cursor()
        return self.saver.save_for_quit()

    def action_save(self) -> None:
        f = self.saver.file
        if f is not None and self.save_now():
            self.notify(_("Saved {name}.", name=f.path.name), timeout=2)

    # -- running (Runs does the work) -------------------------------------------------------------

    def action_run(self) -> None:
        if isinstance(self.step, Passage):
            self.action_run_passage()
            return
        ex = self.exercise
        if ex is None:
            self.notify(_("This step has nothing to check: exercises do."), severity="warning")
            return
        if not self.save_now():
            self.notify(_("Not checked: your code could not be saved first."), severity="error")
            return
        self.runs.check(ex)
        self.work.opened("results")

    def action_run_passage(self) -> None:
        step = self.step
        if not isinstance(step, Passage):
            self.action_run()
            return
        typed = self.work.typed_passage()
        if typed is None:
            self.notify(_("Finish typing the passage first; then Ctrl+R runs what you typed."), severity="warning")
            return
        if self.runs.run_passage(step, typed):
            self.add_class("-passage-run")
            self.work.opened("results")

    def on_run_progress(self, message: RunProgress) -> None:
        self.runs.progress(message)

    def on_run_done(self, message: RunDone) -> None:
        step, verdict = message.exercise, message.verdict
        if not self.runs.done(message):
            return
        if isinstance(step, Passage):
            if self.step == step:
                self.query_one(ResultsPanel).show_verdict(verdict, step.title, ran=True)
                self.work.fit()
            return
        self.refresh_status()
        if self.step != step:
            if verdict.status != Status.CANCELLED:
                self.notify(f"{step.title}: {status_word(verdict.status)}", timeout=4)
            return
        self.show_verdict(step, verdict)

    def show_verdict(self, ex: Exercise, verdict: Verdict) -> None:
        last = self.chapter is not None and self.chapter.steps[-1] == ex
        hint = N_("Ctrl+O picks the next chapter.") if last else N_("Ctrl+N: next step.")
        # A failure the course knows: Tab offers its own hint before the generic ladder.
        mistake = None if verdict.passed else ex.mistake_for(verdict.reason)
        self.coach.mistake = (ex.id, mistake.hint) if mistake else None
        if mistake:
            hint = N_("This looks like a known mistake: Tab on an empty line shows a hint for it.")
        self.query_one(ResultsPanel).show_verdict(
            verdict, ex.title, hint if verdict.passed or mistake else "", ran=False
        )
        self.work.opened("results")
        # No toast: the results banner already says it, and a toast would cover the panel.

    # -- hints and the solution -----------------------------------------------------------------

    def hints_used(self, ex: Exercise) -> int:
        try:
            return self.tutor.session.hints_used(ex)
        except Exception:  # a read error must not block the exercise
            return 0

    def passed(self, ex: Exercise) -> bool:
        try:
            return self.tutor.session.passed(ex)
        except Exception:
            return False

    def on_code_editor_hint_requested(self, message: CodeEditor.HintRequested) -> None:
        self._next_hint(message.row)

    def action_hint(self) -> None:
        self._next_hint(None)

    def _next_hint(self, row: int | None) -> None:
        self.coach.next_hint(row)

    def action_solution(self) -> None:
        self.coach.solution()

    def action_reset(self) -> None:
        self.coach.reset()

    def _neighbour(self, delta: int) -> Step | None:
        """The next/previous step, crossing into the neighbouring chapter at the ends; after a
        pass, the next step passes over exercises this machine cannot run (as watch does)."""
        assert self.step is not None
        ex = self.exercise
        if delta > 0 and ex is not None and self.passed(ex):
            return self.tutor.session.step_after_pass(ex)
        return self.tutor.session.neighbour(self.step, delta)

    def action_next_step(self) -> None:
        step = self._neighbour(+1)
        if step is None:
            self.notify(_("This is the last step of the course."))
        else:
            self.go_to(step)

    def action_previous_step(self) -> None:
        step = self._neighbour(-1)
        if step is None:
            self.notify(_("This is the first step."))
        else:
            self.go_to(step)

    @on(StepNavigator.StepChosen)
    def _chosen(self, event: StepNavigator.StepChosen) -> None:
        if self.chapter is not None and (self.step is None or event.step_id != self.step.id):
            self.go_to(self.chapter.step(event.step_id))

    def action_chapters(self) -> None:
        assert self.chapter is not None

        def chosen(number: int | None) -> None:
            if number is not None and self.chapter is not None and number != self.chapter.number:
                self.open_chapter(number)

        from tutor.ui.screens.chapters import ChapterPicker

        self.app.push_screen(ChapterPicker(self.tutor.course, self.chapter.number, self.tutor.snapshot()), chosen)

    def action_help(self) -> None:
        from tutor.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.tutor.all_bindings()))

    def action_switch_language(self) -> None:
        self.tutor.switch_language("en" if i18n.language() == "zh" else "zh")

    def relocalize(self) -> None:
        """Show this step again in the language just chosen (the app reloaded the course):
        guide, navigator, titles, key bar, hint and results panels. The editor's text, cursor
        and undo history stay as they are (same file, same exercise id); a verdict is shown
        again with its reason as the runner gave it."""
        if self.chapter is None or self.step is None:
            return
        try:
            chapter = self.tutor.course.chapter(self.chapter.number)
            step = chapter.step(self.step.id)
        except KeyError:
            return
        self.chapter, self.step = chapter, step
        guide = self.query_one("#guide", GuideView)
        guide.show(step.text())
        self.call_after_refresh(guide.highlight_code)
        self.refresh_status()
        self.query_one(KeyBar).refresh_keys()
        self.refresh_bindings()
        if self.size.width < MIN_WIDTH or self.size.height < MIN_HEIGHT:
            self.on_resize(events.Resize(self.size, self.size))
        if not self.work.built:
            return
        self.work.relocalize(step)

    def on_screen_resume(self) -> None:
        self._resumed = True
        if self._painted:  # the first resume follows on_mount, which has just drawn the status
            self.refresh_status()

    def error(self, message: str) -> None:
        """One line, never a traceback; the same message at most every 10 s (autosave retries)."""
        now = time.monotonic()
        if self._last_error[0] == message and now - self._last_error[1] < 10:
            return
        self._last_error = (message, now)
        self.notify(message.splitlines()[0] if message else _("error"), severity="error", timeout=8)
