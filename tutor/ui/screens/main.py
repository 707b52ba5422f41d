"""The main screen: guide and step navigator on the left; editor, hints and results on the right.

Saving lives in screens/saving.py and running checks in screens/checking.py (mixins). Slow
work (the runner, autosave's fsync) happens in thread workers that post messages back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Footer, Header, Markdown, Static

from tutor.course import Chapter, Exercise, Passage, Step
from tutor.progress import ProgressError
from tutor.ui.autosave import EditorFile
from tutor.ui.screens.chapters import ChapterPicker
from tutor.ui.screens.checking import CheckingMixin
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.screens.help import HelpScreen
from tutor.ui.screens.saving import SavingMixin
from tutor.ui.screens.solution import SolutionScreen
from tutor.ui.status import first_step_to_do, icon, step_status
from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.hints import HintPanel, code_suggestion
from tutor.ui.widgets.navigator import StepNavigator
from tutor.ui.widgets.results import ResultsPanel
from tutor.workspace import WorkspaceError

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp

READ_TEXT = ("Read the guide on the left (scroll with the mouse or PgUp/PgDn).\n\n"
             "Press Ctrl+N (or Alt+→) for the next step.")


MIN_WIDTH, MIN_HEIGHT = 50, 14


class MainScreen(SavingMixin, CheckingMixin, Screen[None]):
    # Below 70 columns the panes stack; below 110 the navigator collapses to one title line.
    HORIZONTAL_BREAKPOINTS = [(0, "-tiny"), (70, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    # We focus the right widget per step ourselves; Textual's auto-focus would move focus
    # once more at startup, and every focus change recomposes the Footer (~100 ms).
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("ctrl+r,f5", "run", "Check", id="run",
                tooltip="Check your code (pressing it again cancels the run in flight and restarts)"),
        Binding("ctrl+n,alt+right", "next_step", "Next", id="next-step", tooltip="Next step"),
        # Ctrl+P stays Textual's command palette (the way to reach F-key actions on laptops
        # whose F-keys are media keys), so "previous" is Alt+← only.
        Binding("alt+left", "previous_step", "Prev", id="previous-step", tooltip="Previous step"),
        Binding("ctrl+o", "chapters", "Chapters", id="chapters", tooltip="Jump to another chapter"),
        Binding("f8", "reset", "Reset", id="reset",
                tooltip="Reset the exercise to its stub (asks first; your version is backed up)"),
        Binding("f9", "solution", "Solution", id="solution",
                tooltip="Show the reference solution beside your code (after the last hint; asks first)"),
        Binding("ctrl+s", "save", "Save", id="save", show=False,
                tooltip="Save now (your code is also saved automatically as you type)"),
        Binding("f1", "help", "Help", id="help", tooltip="This help"),
    ]

    def __init__(self, chapter: int, step_id: str | None) -> None:
        super().__init__(id="main")
        self._start = (chapter, step_id)
        self.chapter: Chapter | None = None
        self.step: Step | None = None
        self._init_saving()
        self._run_gen = 0
        self._running = False

    @property
    def tutor(self) -> "TutorApp":
        return cast("TutorApp", self.app)

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="▣")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield StepNavigator(id="navigator")
                yield Static(id="step-title")
                with VerticalScroll(id="guide-scroll"):
                    yield Markdown(id="guide")
            with Vertical(id="right"):
                with ContentSwitcher(id="work", initial="read-panel"):
                    yield CodeEditor.for_code(id="editor")
                    yield Static(READ_TEXT, id="read-panel")
                    yield Container(id="typing-area")
                yield HintPanel(id="hints")
                yield ResultsPanel(id="results")
        yield Static(id="too-small")
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        # Below this size the panes cannot show code and guide legibly: say so instead of
        # drawing a broken layout. Nothing is lost; the editor keeps its text behind it.
        width, height = event.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.set_class(small, "-too-small")
        if small:
            self.query_one("#too-small", Static).update(
                f"Terminal too small ({width}x{height}): tutor needs at least {MIN_WIDTH}x{MIN_HEIGHT}. "
                "Enlarge the window; your work is saved.")

    def on_mount(self) -> None:
        chapter, step_id = self._start
        self.open_chapter(chapter, step_id)
        self.set_interval(1.0, self._watch_disk)
        notice = self.tutor.progress.notice
        if notice:
            self.notify(notice, severity="warning", timeout=15)
        # Warm the runner (it imports torch in its own process) once the first frame is up.
        self.call_after_refresh(self.tutor.warm_up)

    # -- where we are ---------------------------------------------------------------------------

    @property
    def exercise(self) -> Exercise | None:
        return self.step if isinstance(self.step, Exercise) else None

    def open_chapter(self, number: int, step_id: str | None = None) -> None:
        """Open chapter `number` at `step_id`, else where the learner was, else its start."""
        course = self.tutor.course
        try:
            chapter = course.chapter(number)
        except KeyError:
            chapter = course.chapters[0]
            self.notify(f"There is no chapter {number}; opening chapter {chapter.number}.",
                        severity="warning")
        step: Step | None = None
        if step_id is None:
            last = self.tutor.last_position()
            if last and last[0] == chapter.number:
                step_id = last[1]
        if step_id is not None:
            step = next((s for s in chapter.steps if s.id == step_id), None)
        if step is None:
            step = first_step_to_do(chapter, self.tutor.snapshot())
        self.go_to(step)

    def go_to(self, step: Step) -> bool:
        """Show `step` (of any chapter): save the current file first, then guide, navigator,
        work area. False when the learner must first answer a question about their file."""
        if not self.leave_exercise():
            return False
        chapter = self.tutor.course.chapter_of(step)
        if self.chapter is not None and chapter.number != self.chapter.number:
            self.notify(f"Chapter {chapter.number}: {chapter.title}", timeout=3)
        self.chapter = chapter
        self.step = step
        try:
            self.tutor.progress.set_position(chapter.number, step.id)
        except ProgressError as exc:
            self.error(str(exc))
        self.query_one("#guide", Markdown).update(step.text())
        self.query_one("#guide-scroll", VerticalScroll).scroll_home(animate=False)
        self.refresh_status()
        self._show_work(step)
        return True

    def refresh_status(self) -> None:
        """Navigator icons, the current-step line and the header's progress figures."""
        if self.chapter is None or self.step is None:
            return
        snap = self.tutor.snapshot()
        self.query_one(StepNavigator).show(self.chapter, self.step.id, snap)
        n = self.chapter.steps.index(self.step) + 1
        status = step_status(self.step, snap)
        self.query_one("#step-title", Static).update(
            f"▶ {icon(status)} Step {n}/{len(self.chapter.steps)} · {self.step.title}")
        self.tutor.update_header(self.chapter, snap)

    def _show_work(self, step: Step) -> None:
        switcher = self.query_one("#work", ContentSwitcher)
        hints = self.query_one(HintPanel)
        results = self.query_one(ResultsPanel)
        self._file = None
        self.set_class(isinstance(step, Exercise), "-exercise")
        self.remove_class("-passage-run")  # shown again once a finished passage is run
        if isinstance(step, Exercise):
            self._open_exercise(step)
            switcher.current = "editor"
            self._show_hints(step, self._hints_used(step))
            results.show_idle(self._idle_text(step))
            self.query_one("#editor").focus()
        elif isinstance(step, Passage):
            hints.show_hints((), 0)
            switcher.current = "typing-area"
            self._mount_passage(step)
        else:
            hints.show_hints((), 0)
            switcher.current = "read-panel"
            self.query_one("#guide-scroll").focus()

    def _idle_text(self, ex: Exercise) -> str:
        text = "Ctrl+R or F5 checks your code.  Tab (outside indentation) gives a hint."
        if ex.needs.device_here(self.tutor.gpus or 0)[0] is None:
            text += f"\nThis exercise {ex.needs.describe()}: here the check will be skipped."
        return text

    def _open_exercise(self, ex: Exercise) -> None:
        editor = self.query_one("#editor", CodeEditor)
        f = EditorFile(self.tutor.workspace, ex)
        try:
            text = f.load()
        except (WorkspaceError, OSError, UnicodeDecodeError) as exc:
            # Show the stub read-only and never autosave over a file we could not read.
            self.error(f"cannot open your copy of {ex.id} ({f.path}): "
                       f"{getattr(exc, 'strerror', None) or exc}")
            editor.read_only = True
            editor.load_text(ex.stub.read_text(encoding="utf-8"))
            return
        kept = self.unsaved_text(ex.id)  # what the disk refused earlier this session
        self._file = f
        editor.read_only = False
        editor.load_text(kept if kept is not None else text)  # kept: autosave retries
        editor.move_cursor((0, 0))

    def _mount_passage(self, step: Passage) -> None:
        area = self.query_one("#typing-area", Container)
        area.remove_children()
        code = step.code()
        widget: Widget
        try:  # written by another module owner; absent until it lands
            from tutor.ui.widgets.typealong import TypeAlong
        except ImportError:
            widget = CodeEditor.for_code(code, read_only=True, id="passage-code")
        else:
            widget = TypeAlong(passage_key=step.key, target=code, progress=self.tutor.progress)
        area.mount(widget)
        self.call_after_refresh(widget.focus)

    def on_type_along_finished(self) -> None:
        self.refresh_status()

    def on_type_along_completed(self) -> None:
        self.refresh_status()

    # -- hints and the solution -----------------------------------------------------------------

    def _hints_used(self, ex: Exercise) -> int:
        try:
            return min(self.tutor.progress.exercise(ex.id).hints_used, len(ex.hints))
        except Exception:  # a read error must not block the exercise
            return 0

    @on(CodeEditor.HintRequested)
    def action_hint(self) -> None:
        ex = self.exercise
        if ex is None:
            return
        used = self._hints_used(ex)
        if used >= len(ex.hints):
            self._offer_solution(ex)
            return
        try:
            used = self.tutor.progress.use_hint(ex.id, len(ex.hints))
        except ProgressError as exc:
            self.error(str(exc))
            used += 1  # show it anyway; it just isn't recorded
        self._show_hints(ex, used)
        self.refresh_status()

    def _show_hints(self, ex: Exercise, revealed: int) -> None:
        self.query_one(HintPanel).show_hints(ex.hints, revealed)
        latest = ex.hints[revealed - 1] if revealed else ""
        self.query_one("#editor", CodeEditor).set_ghost(code_suggestion(latest))

    def action_solution(self) -> None:
        ex = self.exercise
        if ex is None:
            self.notify("Only exercises have a reference solution.", severity="warning")
            return
        left = len(ex.hints) - self._hints_used(ex)
        if left > 0:
            self.notify(f"Try the hints first: Tab reveals the next ({left} left).", severity="warning")
            return
        self._offer_solution(ex)

    def _offer_solution(self, ex: Exercise) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.save_now()
                mine = self.query_one("#editor", CodeEditor).text
                self.app.push_screen(SolutionScreen(ex.title, mine, ex.solution.read_text(encoding="utf-8")))

        self.app.push_screen(ConfirmScreen(
            f"That was the last of {len(ex.hints)} hints.\nReveal the reference solution "
            "beside your code?", yes="Show solution", no="Not yet"), answered)

    # -- other actions --------------------------------------------------------------------------

    def action_reset(self) -> None:
        ex = self.exercise
        if ex is None:
            self.notify("Only exercises can be reset.", severity="warning")
            return

        def answered(yes: bool | None) -> None:
            if not yes or self.exercise != ex:
                return
            if not self.save_now():  # the backup must hold the very latest text
                self.notify("Not reset: your code could not be saved first.", severity="error")
                return
            try:
                backup = self.tutor.workspace.reset(ex)
            except WorkspaceError as exc:
                self.error(str(exc))
                return
            self._open_exercise(ex)
            self.query_one(ResultsPanel).show_idle(self._idle_text(ex))
            where = f" Your version was saved as {backup.name}." if backup else ""
            self.notify(f"{ex.title} was reset to the starting code.{where}")

        self.app.push_screen(ConfirmScreen(
            f"Reset {ex.title} to the starting code?\nYour current version is kept in the backups "
            "folder.", yes="Reset", no="Cancel"), answered)

    def _neighbour(self, delta: int) -> Step | None:
        """The next/previous step, crossing into the neighbouring chapter at the ends."""
        assert self.chapter is not None and self.step is not None
        steps = self.chapter.steps
        i = steps.index(self.step) + delta
        if 0 <= i < len(steps):
            return steps[i]
        chapters = self.tutor.course.chapters
        j = chapters.index(self.chapter) + delta
        if not 0 <= j < len(chapters):
            return None
        return chapters[j].steps[0] if delta > 0 else chapters[j].steps[-1]

    def action_next_step(self) -> None:
        step = self._neighbour(+1)
        if step is None:
            self.notify("This is the last step of the course.")
        else:
            self.go_to(step)

    def action_previous_step(self) -> None:
        step = self._neighbour(-1)
        if step is None:
            self.notify("This is the first step.")
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

        self.app.push_screen(ChapterPicker(self.tutor.course, self.chapter.number,
                                           self.tutor.snapshot()), chosen)

    def action_save(self) -> None:
        if self._file is None:
            return
        if self.save_now():
            self.notify(f"Saved {self._file.path.name}.", timeout=2)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.tutor.all_bindings()))

    def on_screen_resume(self) -> None:
        self.refresh_status()

