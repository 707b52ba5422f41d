"""The main screen, laid out by step kind.

- Reading steps: the step navigator beside the guide, which gets the rest of the width (at a
  readable measure).
- Exercises and type-along passages: the guide beside the work (editor or type-along, with the
  hint and results panels under it). F4 zooms either pane to the full width; Alt+Shift+←/→
  moves the split; F2 shows or hides the navigator. These choices persist (progress state).

Saving is a composed helper (tutor/ui/saving.py), running checks another (tutor/ui/runs.py);
the app is known only as a `TutorHost`, so nothing here imports tutor.ui.app. Slow work (the
runner, autosave's fsync) happens in thread workers that post messages back.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Static

from tutor import gcpause, i18n
from tutor.course import Chapter, Exercise, Passage, Step
from tutor.i18n import N_, _
from tutor.progress import ProgressError
from tutor.runner.protocol import Verdict
from tutor.editor_file import EditorFile
from tutor.ui.host import TutorHost
from tutor.ui.messages import RunDone, RunProgress, SaveDone
from tutor.ui.runs import Runs
from tutor.ui.saving import Saver
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.status import status_word
from tutor.steps import (
    chapter_progress_label,
    icon,
    needs_text,
    step_status,
)
from tutor.ui.widgets.guide import GuideView

if TYPE_CHECKING:
    from tutor.ui.widgets.editor import CodeEditor
from tutor.ui.widgets.hints import HintPanel, code_suggestion
from tutor.ui.widgets.keybar import KeyBar
from tutor.ui.widgets.navigator import StepNavigator
from tutor.ui.widgets.results import ResultsPanel
from tutor.workspace import WorkspaceError

MIN_WIDTH, MIN_HEIGHT = 50, 14
GUIDE_MIN, WORK_MIN = 24, 40  # the panes' min-width in tutor.tcss
ZOOMS = ("split", "guide", "work")
SPLIT_MIN, SPLIT_MAX, SPLIT_STEP = 20, 70, 5
# The guide's share of the width, per step kind: a type-along passage needs its code's full
# line length more than the guide (which shows the same code).
SPLIT_DEFAULT = {"exercise": 40, "passage": 30}

# Which step kinds show a binding in the footer (the key works everywhere it makes sense; the
# footer lists only what helps on this step, so it fits 80 columns with Help and Quit).
FOOTER: dict[str, tuple[str, ...]] = {
    "run": ("exercise",),
    "run_passage": ("passage",),
    "next_step": ("read", "exercise", "passage"),
    "previous_step": ("read",),
    "toggle_navigator": ("read",),
    "chapters": ("read",),
    "solution": ("exercise",),
    "zoom": ("exercise", "passage"),
    "help": ("read", "exercise", "passage"),
}


# The bindings the key bar may show (FOOTER says on which step kinds), each declared once.
_KEYS = [
    # Ctrl+R: Run on a passage; elsewhere run_passage is disabled and the key falls through
    # to Check (which says what it checks on a reading step).
    Binding(
        "ctrl+r,f5",
        "run_passage",
        N_("Run"),
        id="run-passage",
        tooltip=N_("Run the passage you typed as a program and show its output"),
    ),
    Binding(
        "ctrl+r,f5",
        "run",
        N_("Check"),
        id="run",
        tooltip=N_("Check your code (pressing it again cancels the run in flight and restarts)"),
    ),
    Binding("ctrl+n,alt+right", "next_step", N_("Next"), id="next-step", tooltip=N_("Next step")),
    # Ctrl+P stays Textual's command palette (the way to reach F-key actions on laptops whose
    # F-keys are media keys), so "previous" is Alt+← only.
    Binding("alt+left", "previous_step", N_("Prev"), id="previous-step", tooltip=N_("Previous step")),
    Binding("f2", "toggle_navigator", N_("Steps"), id="steps", tooltip=N_("Show or hide the list of steps")),
    Binding("ctrl+o", "chapters", N_("Chapters"), id="chapters", tooltip=N_("Jump to another chapter")),
    Binding(
        "f9",
        "solution",
        N_("Solution"),
        id="solution",
        tooltip=N_("Show the reference solution beside your code (once passed, or after the last hint)"),
    ),
    Binding(
        "f4",
        "zoom",
        N_("Zoom"),
        id="zoom",
        tooltip=N_("Give the guide, then the work, the full width; again: side by side"),
    ),
    Binding("f1", "help", N_("Help"), id="help", tooltip=N_("Every key, what Tab does, the step icons")),
]


class MainScreen(Screen[None]):
    # Below 70 columns the panes stack; short terminals get smaller panels.
    HORIZONTAL_BREAKPOINTS = [(0, "-tiny"), (70, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    # We focus the right widget per step ourselves. "" turns Textual's auto-focus off (None
    # would inherit the app's "*", which focused the navigator first): every focus change
    # restyles the screen and recomposes the Footer, ~80 ms of the first paint each.
    AUTO_FOCUS = ""

    BINDINGS = [
        *_KEYS,
        Binding(
            "f8",
            "reset",
            N_("Reset"),
            id="reset",
            show=False,
            tooltip=N_("Reset the exercise to its stub (asks first; your version is backed up)"),
        ),
        Binding(
            "alt+shift+left",
            "split(-1)",
            N_("Split ◀"),
            id="split-left",
            show=False,
            tooltip=N_("Move the split: narrower guide"),
        ),
        Binding(
            "alt+shift+right",
            "split(1)",
            N_("Split ▶"),
            id="split-right",
            show=False,
            tooltip=N_("Move the split: wider guide"),
        ),
        Binding(
            "alt+down,ctrl+down",
            "scroll_panel(1)",
            N_("Scroll panel"),
            id="panel-down",
            show=False,
            tooltip=N_("Scroll the results (or hints) panel down"),
        ),
        Binding(
            "alt+up,ctrl+up",
            "scroll_panel(-1)",
            N_("Scroll panel up"),
            id="panel-up",
            show=False,
            tooltip=N_("Scroll the results (or hints) panel up"),
        ),
        # The editor binds F7 to select-all: priority, so the panels come back from anywhere.
        Binding(
            "f7",
            "toggle_panels",
            N_("Panels"),
            id="panels",
            show=False,
            priority=True,
            tooltip=N_("Show the hint and results panels again (Esc closes the top one)"),
        ),
        Binding(
            "ctrl+s",
            "save",
            N_("Save"),
            id="save",
            show=False,
            tooltip=N_("Save now (your code is also saved automatically as you type)"),
        ),
        # F12: the language, live (the step, the editor and the results stay as they are).
        Binding(
            "f12",
            "switch_language",
            N_("Language"),
            id="language",
            show=False,
            tooltip=N_("Switch between English and 中文 (remembered for next time)"),
        ),
    ]

    def __init__(self, chapter: int, step_id: str | None) -> None:
        super().__init__(id="main")
        self._mistake: tuple[str, str] | None = None  # (exercise id, its targeted hint)
        self._start = (chapter, step_id)
        self.chapter: Chapter | None = None
        self.step: Step | None = None
        self.saver = Saver(
            self,
            self._editor,
            lambda: self.tutor.progress,
            self.error,
            self.refresh_status,
        )
        self.runs = Runs(self, lambda: self.tutor, lambda: self.query_one(ResultsPanel), self.error)
        self._panels: list[str] = []  # open panels, most recent last (Esc closes the last)
        self._prefs: dict[str, str | None] = {}  # ui.* progress state, cached
        self._layout: tuple[object, ...] = ()  # what _apply_layout last applied
        self._work_started = False
        self._work_ready = asyncio.Event()
        self._painted = False  # the first frame is up
        self._resumed = False  # Textual has styled the screen once (it does so on resume)
        self._last_error = ("", 0.0)
        self._header = ""  # what the title bar says when no notice stands in it
        self._notice_timer: Timer | None = None

    @property
    def tutor(self) -> TutorHost:
        return cast(TutorHost, self.app)

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # One Static, not Textual's Header (three widgets and a clock slot): a lighter first paint.
        yield Static(id="title-bar")
        yield Static(id="step-title")
        with Horizontal(id="body"):
            yield StepNavigator(id="navigator")
            with Vertical(id="guide-pane"):
                with VerticalScroll(id="guide-scroll"):
                    yield GuideView(id="guide")
            # Filled by _ensure_work: a reading step's first paint does without the editor.
            yield Vertical(id="work-pane")
        yield Static(id="too-small")
        yield KeyBar(id="keys", shows=self.in_key_bar)

    def _editor(self) -> CodeEditor:
        # Imported when the work pane is built, after the first paint (TextArea and its
        # syntax support cost ~10 ms of start-up that a reading step does not need).
        from tutor.ui.widgets.editor import CodeEditor

        return self.query_one("#editor", CodeEditor)

    async def _build_work(self) -> None:
        """Mount the editor, type-along area and panels (once). A reading step's first paint
        does without them (they are built just after it); an exercise waits for them."""
        if self._work_ready.is_set():
            return
        if not self._work_started:
            from tutor.ui.widgets.editor import CodeEditor

            self._work_started = True
            switcher = ContentSwitcher(
                CodeEditor.for_code(id="editor", language_later=True),
                Container(id="typing-area"),
                id="work",
                initial="editor",
            )
            await self.query_one("#work-pane").mount_all([switcher, HintPanel(id="hints"), ResultsPanel(id="results")])
            self._work_ready.set()
        await self._work_ready.wait()

    @property
    def _work_built(self) -> bool:
        return self._work_ready.is_set()

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
            self._apply_layout()

    def _state(self, key: str, default: str) -> str:
        """A remembered UI choice (read once, then from memory: layout runs on every resize)."""
        if key not in self._prefs:
            try:
                self._prefs[key] = self.tutor.progress.get_state(f"ui.{key}")
            except Exception:  # a read error must not block the layout
                self._prefs[key] = None
        return self._prefs[key] or default

    def _set_state(self, key: str, value: str) -> None:
        self._prefs[key] = value
        try:
            self.tutor.progress.set_state(f"ui.{key}", value)
        except ProgressError as exc:
            self.error(str(exc))

    def _kind(self) -> str:
        return (
            "exercise" if isinstance(self.step, Exercise) else "passage" if isinstance(self.step, Passage) else "read"
        )

    def _apply_layout(self) -> None:
        """Step kind, zoom, split and navigator choice -> classes and the guide's width."""
        kind = self._kind()
        zoom = self._state("zoom", "split") if kind != "read" else "split"
        nav = self._state(f"nav.{'read' if kind == 'read' else 'work'}", "1" if kind == "read" else "0")
        # One style update for all of them (each set_class would restyle the whole screen).
        want = {
            "-read": kind == "read",
            "-exercise": kind == "exercise",
            "-passage": kind == "passage",
            "-zoom-guide": zoom == "guide",
            "-zoom-work": zoom == "work",
            "-nav": nav == "1",
        }
        if any(self.has_class(name) != on for name, on in want.items()):
            for name, on in want.items():
                self.set_class(on, name, update=False)
            if self._resumed:  # before the first resume, Textual's own styling pass covers it
                self.update_node_styles()
        try:
            split = int(self._state(f"split.{kind}", str(SPLIT_DEFAULT.get(kind, 40))))
        except ValueError:
            split = SPLIT_DEFAULT.get(kind, 40)
        split = max(SPLIT_MIN, min(SPLIT_MAX, split))
        layout = (kind, zoom, nav, split, self.has_class("-tiny"), self.size)
        if layout == self._layout:
            return
        self._layout = layout
        guide = self.query_one("#guide-pane")
        full = kind == "read" or zoom == "guide" or self.has_class("-tiny")
        width = "1fr" if full else f"{split}%"
        cramped = False
        if not full and nav == "1" and zoom == "split":
            width, cramped = self._guide_beside_navigator(split)
        self.set_class(cramped, "-nav-over-guide")
        if str(guide.styles.width) != width:
            guide.styles.width = width
        self._fit_panels()

    def _guide_beside_navigator(self, split: int) -> tuple[str, bool]:
        """The guide's width when the navigator (F2) stands beside guide and work: `split`
        percent of what the navigator leaves, so the three fit the screen. Where the work would
        get under its minimum even with the narrowest guide (80 columns), the navigator takes
        the guide's place until F2 hides it again (True): the editor keeps its right edge."""
        nav = self.query_one(StepNavigator).styles.width
        nav_cells = nav.cells if nav is not None and nav.cells is not None else 32
        rest = self.size.width - nav_cells
        guide = max(GUIDE_MIN, rest * split // 100)
        if rest - guide < WORK_MIN:
            guide = rest - WORK_MIN
        if guide < GUIDE_MIN:
            return f"{split}%", True
        return str(guide), False

    def _fit_panels(self) -> None:
        """Cap the hint and results panels so the editor keeps 12 lines (8 when the terminal
        is short), and keep the cursor line in view."""
        if not self.is_mounted or not self._work_built:
            return
        height = self.size.height
        keep = 12 if height >= 32 else 8
        # header, step title (two rows when a long title wraps), footer; the editor's border
        title = max(1, self.query_one("#step-title", Static).size.height)
        room = max(4, height - 2 - title - (keep + 2))
        hints = self.query_one(HintPanel)
        results = self.query_one(ResultsPanel)
        hint_cap = max(3, room // 2) if results.open else room
        result_cap = max(3, room - (hint_cap if hints.open else 0))
        for panel, cap in ((hints, hint_cap), (results, result_cap)):
            if panel.styles.max_height is None or panel.styles.max_height.value != cap:
                panel.styles.max_height = cap
        # The newest hint is at the end: keep it in view when the panel shrinks.
        self.call_after_refresh(hints.scroll_end, animate=False)
        if self._kind() == "exercise":
            self.call_after_refresh(self._cursor_into_view)

    def _cursor_into_view(self) -> None:
        if not self._work_built:
            return
        editor = self._editor()
        if editor.display:
            editor.scroll_cursor_visible()

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
            await self._build_work()  # the first screen shows the editor: build it first
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
        self.app.call_after_refresh(self._build_work)

    # -- footer by step kind --------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run_passage":  # off a passage, Ctrl+R falls through to Check
            return self._kind() == "passage"
        return True

    def in_key_bar(self, binding: Binding) -> bool:
        """Whether the key bar lists `binding` on this step (the key works everywhere)."""
        if binding.action == "run_passage":
            return self._kind() == "passage" and self._typed_passage() is not None
        kinds = FOOTER.get(binding.action)
        return kinds is None or self._kind() in kinds

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
        if isinstance(step, (Exercise, Passage)) and not self._work_built:

            async def when_built() -> None:  # only in the moment after the first paint
                await self._build_work()
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
        self._show_work(step)
        self._apply_layout()
        self._fit_panels()
        if self._painted:  # the new title may wrap to another row: fit again once it is laid out
            self.call_after_refresh(self._fit_panels)
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
        self._header = f"{self.app.title} — {chapter_progress_label(self.chapter, snap)}"
        if self._notice_timer is None:
            # One row whatever it says: no layout pass for it.
            self.query_one("#title-bar", Static).update(Text(self._header), layout=False)

    # -- notices: in the title bar, over nothing the learner is reading ---------------------------

    def show_notice(self, message: str, severity: str, timeout: float) -> None:
        """Show a notice in place of the title bar for `timeout` seconds (the app's notify
        comes here while this screen is on top): a toast in the corner covered the results,
        the diff or the newest hint. A notice longer than the row wraps onto a second row."""
        bar = self.query_one("#title-bar", Static)
        for level in ("information", "warning", "error"):
            bar.set_class(level == severity, f"-notice-{level}")
        bar.add_class("-notice")
        bar.update(Text(message.replace("\n", " ")))
        if self._notice_timer is not None:
            self._notice_timer.stop()
        self._notice_timer = self.set_timer(max(1.0, timeout), self._end_notice)
        self.call_after_refresh(self._fit_panels)

    def _end_notice(self) -> None:
        self._notice_timer = None
        bar = self.query_one("#title-bar", Static)
        bar.remove_class("-notice", "-notice-information", "-notice-warning", "-notice-error")
        bar.update(Text(self._header))
        self.call_after_refresh(self._fit_panels)

    def _show_work(self, step: Step) -> None:
        self.saver.file = None
        self._panels = []
        if not self._work_built:  # a reading step before the work pane exists
            self._focus(self.query_one("#guide-scroll"))
            return
        switcher = self.query_one("#work", ContentSwitcher)
        hints = self.query_one(HintPanel)
        results = self.query_one(ResultsPanel)
        results.show_idle()
        if isinstance(step, Exercise):
            self._open_exercise(step)
            switcher.current = "editor"
            self._show_hints(step, self._hints_used(step), None)
            results.show_idle(self._idle_text(step))
            if results.open:
                self._panels.append("results")
            self._focus(self.query_one("#editor"))
        elif isinstance(step, Passage):
            hints.show_hints((), 0)
            switcher.current = "typing-area"
            self._mount_passage(step)
        else:
            hints.show_hints((), 0)
            self.query_one("#typing-area", Container).remove_children()
            self.query_one("#guide-scroll").focus()

    def _focus(self, widget: Widget) -> None:
        """Focus `widget`; before the first frame at once, so the first layout already has the
        focus styles (Widget.focus defers it, which restyled and laid out the screen again)."""
        if self._painted:
            widget.focus()
        else:
            self.set_focus(widget, scroll_visible=False)

    def _idle_text(self, ex: Exercise) -> str:
        if ex.needs.device_here(self.tutor.gpus or 0)[0] is None:
            return _("This exercise {needs}: here its check will be skipped.", needs=needs_text(ex.needs))
        return ""

    def _open_exercise(self, ex: Exercise) -> None:
        editor = self._editor()
        # The border names the file as the guide does (and as `tutor watch` and your own
        # editor see it): workspace/<chapter>/<file>, under the tutor home.
        editor.border_title = f"workspace/{ex.workspace_name}"
        f = EditorFile(self.tutor.workspace, ex)
        try:
            text = f.load()
        except (WorkspaceError, OSError, UnicodeDecodeError) as exc:
            # Show the stub read-only and never autosave over a file we could not read.
            self.error(
                _(
                    "cannot open your copy of {id} ({path}): {error}",
                    id=ex.id,
                    path=f.path,
                    error=getattr(exc, "strerror", None) or exc,
                )
            )
            editor.read_only = True
            editor.load_text(ex.stub.read_text(encoding="utf-8"))
            return
        editor.ensure_language()  # before loading: setting it later resets cursor and undo
        kept = self.saver.unsaved_text(ex.id)  # what the disk refused earlier this session
        self.saver.file = f
        editor.read_only = False
        editor.load_text(kept if kept is not None else text)  # kept: autosave retries
        editor.move_cursor(self._saved_cursor(ex, editor), center=True)

    def _saved_cursor(self, ex: Exercise, editor: CodeEditor) -> tuple[int, int]:
        """Where the learner left the cursor in this exercise (clamped to the text)."""
        row, _sep, col = self._state(f"cursor.{ex.id}", "0,0").partition(",")
        try:
            r = max(0, min(int(row), editor.document.line_count - 1))
            return r, max(0, min(int(col or 0), len(editor.document[r])))
        except ValueError:
            return 0, 0

    def _remember_cursor(self) -> None:
        f = self.saver.file
        if f is not None:
            row, col = self._editor().cursor_location
            self._set_state(f"cursor.{f.exercise.id}", f"{row},{col}")

    def _mount_passage(self, step: Passage) -> None:
        area = self.query_one("#typing-area", Container)
        area.remove_children()
        code = step.code()
        from tutor.ui.widgets.typealong import TypeAlong

        widget = TypeAlong(passage_key=step.key, target=code, progress=self.tutor.progress)
        area.mount(widget)
        self.call_after_refresh(widget.focus)

    def _typed_passage(self) -> str | None:
        """The finished type-along's text on a passage step, else None."""
        try:
            from tutor.ui.widgets.typealong import TypeAlong
        except ImportError:
            return None
        done = [w for w in self.query(TypeAlong) if w.session.finished]
        return done[0].typed_text if done else None

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
        editor = self._editor()
        if self.has_class("-zoom-guide"):  # the editor is hidden: Esc brings it back
            if event.key == "escape":
                event.stop()
                self._set_state("zoom", "split")
                self._apply_layout()
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

    def on_code_editor_escape_pressed(self) -> None:
        """Esc in the editor closes the most recently opened panel; focus stays put."""
        while self._panels:
            name = self._panels.pop()
            panel = self.query_one(HintPanel) if name == "hints" else self.query_one(ResultsPanel)
            if panel.open:
                panel.close()
                self._fit_panels()
                return

    def _opened(self, name: str) -> None:
        if name in self._panels:
            self._panels.remove(name)
        self._panels.append(name)
        self._fit_panels()

    def action_toggle_panels(self) -> None:
        if not self._work_built:
            return
        hints, results = self.query_one(HintPanel), self.query_one(ResultsPanel)
        if hints.open or results.open:
            hints.close()
            results.close()
            self._panels = []
        else:
            for name, panel in (("hints", hints), ("results", results)):
                if panel.reopen():
                    self._panels.append(name)
            if not self._panels:
                self.notify(_("No hints or results yet: Tab on an empty line gives a hint, Ctrl+R checks."), timeout=4)
        self._fit_panels()

    def action_scroll_panel(self, direction: int) -> None:
        if not self._work_built:
            return
        results, hints = self.query_one(ResultsPanel), self.query_one(HintPanel)
        panel: VerticalScroll | None = results if results.open else hints if hints.open else None
        if panel is None:
            self.notify(_("No panel is open to scroll."), timeout=2)
            return
        step = max(1, panel.scrollable_content_region.height - 1)
        panel.scroll_relative(y=direction * step, animate=False)

    # -- the layout keys --------------------------------------------------------------------------

    def action_zoom(self) -> None:
        if self._kind() == "read":
            self.notify(_("Reading steps already give the guide the whole width."), timeout=3)
            return
        zoom = self._state("zoom", "split")
        nxt = ZOOMS[(ZOOMS.index(zoom) + 1) % len(ZOOMS)] if zoom in ZOOMS else "split"
        self._set_state("zoom", nxt)
        self._apply_layout()
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
        if self._kind() == "read":
            return
        try:
            kind = self._kind()
            split = int(self._state(f"split.{kind}", str(SPLIT_DEFAULT.get(kind, 40))))
        except ValueError:
            split = SPLIT_DEFAULT.get(self._kind(), 40)
        split = max(SPLIT_MIN, min(SPLIT_MAX, split + direction * SPLIT_STEP))
        self._set_state(f"split.{self._kind()}", str(split))
        if self._state("zoom", "split") != "split":
            self._set_state("zoom", "split")
        self._apply_layout()

    def action_toggle_navigator(self) -> None:
        key = f"nav.{'read' if self._kind() == 'read' else 'work'}"
        shown = self.has_class("-nav")
        self._set_state(key, "0" if shown else "1")
        self._apply_layout()
        if not shown:
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
        self._remember_cursor()
        return self.saver.leave()

    def save_for_quit(self) -> str:
        self._remember_cursor()
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
        self._opened("results")

    def action_run_passage(self) -> None:
        step = self.step
        if not isinstance(step, Passage):
            self.action_run()
            return
        typed = self._typed_passage()
        if typed is None:
            self.notify(_("Finish typing the passage first; then Ctrl+R runs what you typed."), severity="warning")
            return
        if self.runs.run_passage(step, typed):
            self.add_class("-passage-run")
            self._opened("results")

    def on_run_progress(self, message: RunProgress) -> None:
        self.runs.progress(message)

    def on_run_done(self, message: RunDone) -> None:
        step, verdict = message.exercise, message.verdict
        if not self.runs.done(message):
            return
        if isinstance(step, Passage):
            if self.step == step:
                self.query_one(ResultsPanel).show_verdict(verdict, step.title, ran=True)
                self._fit_panels()
            return
        self.refresh_status()
        if self.step != step:
            if verdict.status != "cancelled":
                self.notify(f"{step.title}: {status_word(verdict.status)}", timeout=4)
            return
        self.show_verdict(step, verdict)

    def show_verdict(self, ex: Exercise, verdict: Verdict) -> None:
        last = self.chapter is not None and self.chapter.steps[-1] == ex
        hint = N_("Ctrl+O picks the next chapter.") if last else N_("Ctrl+N: next step.")
        # A failure the course knows: Tab offers its own hint before the generic ladder.
        mistake = None if verdict.passed else ex.mistake_for(verdict.reason)
        self._mistake = (ex.id, mistake.hint) if mistake else None
        if mistake:
            hint = N_("This looks like a known mistake: Tab on an empty line shows a hint for it.")
        self.query_one(ResultsPanel).show_verdict(
            verdict, ex.title, hint if verdict.passed or mistake else "", ran=False
        )
        self._opened("results")
        # No toast: the results banner already says it, and a toast would cover the panel.

    # -- hints and the solution -----------------------------------------------------------------

    def _hints_used(self, ex: Exercise) -> int:
        try:
            return self.tutor.session.hints_used(ex)
        except Exception:  # a read error must not block the exercise
            return 0

    def _passed(self, ex: Exercise) -> bool:
        try:
            return self.tutor.session.passed(ex)
        except Exception:
            return False

    def on_code_editor_hint_requested(self, message: CodeEditor.HintRequested) -> None:
        self._next_hint(message.row)

    def action_hint(self) -> None:
        self._next_hint(None)

    def _next_hint(self, row: int | None) -> None:
        ex = self.exercise
        if ex is None:
            return
        targeted = self._mistake
        if targeted and targeted[0] == ex.id:
            self._mistake = None
            panel = self.query_one(HintPanel)
            panel.show_targeted(targeted[1])
            self._editor().set_ghost(code_suggestion(targeted[1]), row)
            self.query_one(ResultsPanel).drop_next_hint()  # "Tab … shows a hint": done
            self._opened("hints")
            return
        used = self._hints_used(ex)
        if used >= len(ex.hints):
            self._offer_solution(ex)
            return
        try:
            used = self.tutor.session.use_hint(ex)
        except ProgressError as exc:
            self.error(str(exc))
            used += 1  # show it anyway; it just isn't recorded
        self._show_hints(ex, used, row)
        self.refresh_status()

    def _show_hints(self, ex: Exercise, revealed: int, row: int | None) -> None:
        """The revealed hints; the newest one's code shows as ghost text on `row` (the empty
        line where the learner asked), nowhere else."""
        panel = self.query_one(HintPanel)
        panel.show_hints(ex.hints, revealed)
        latest = ex.hints[revealed - 1] if revealed else ""
        self._editor().set_ghost(code_suggestion(latest), row)
        if panel.open:
            self._opened("hints")

    def action_solution(self) -> None:
        ex = self.exercise
        if ex is None:
            self.notify(_("Only exercises have a reference solution."), severity="warning")
            return
        if self._passed(ex):  # passed: compare freely, no hints to spend first
            self._show_solution(ex)
            return
        left = len(ex.hints) - self._hints_used(ex)  # the session's gate, read safely
        if left > 0:
            self.notify(
                _("Try the hints first: Tab on an empty line reveals the next ({left} left).", left=left),
                severity="warning",
            )
            return
        self._offer_solution(ex)

    def _show_solution(self, ex: Exercise) -> None:
        self.save_now()
        mine = self._editor().text
        from tutor.ui.screens.solution import (
            SolutionScreen,  # dialogs load when first opened
        )

        self.app.push_screen(SolutionScreen(ex.title, mine, ex.solution.read_text(encoding="utf-8")))

    def _offer_solution(self, ex: Exercise) -> None:
        def answered(yes: bool | None) -> None:
            if yes and self.exercise == ex:
                self._show_solution(ex)

        self.app.push_screen(
            ConfirmScreen(
                _("That was the last of {n} hints.\nReveal the reference solution beside your code?", n=len(ex.hints)),
                yes=_("Show solution"),
                no=_("Not yet"),
            ),
            answered,
        )

    # -- other actions --------------------------------------------------------------------------

    def action_reset(self) -> None:
        ex = self.exercise
        if ex is None:
            self.notify(_("Only exercises can be reset."), severity="warning")
            return

        def answered(yes: bool | None) -> None:
            if not yes or self.exercise != ex:
                return
            if not self.save_now():  # the backup must hold the very latest text
                self.notify(_("Not reset: your code could not be saved first."), severity="error")
                return
            try:
                backup = self.tutor.workspace.reset(ex)
            except WorkspaceError as exc:
                self.error(str(exc))
                return
            self._open_exercise(ex)
            self.query_one(ResultsPanel).show_idle(self._idle_text(ex))
            self._fit_panels()
            said = _("{title} was reset to the starting code.", title=ex.title)
            if backup:
                said += " " + _("Your version was saved as {name}.", name=backup.name)
            self.notify(said)

        self.app.push_screen(
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

    def _neighbour(self, delta: int) -> Step | None:
        """The next/previous step, crossing into the neighbouring chapter at the ends; after a
        pass, the next step passes over exercises this machine cannot run (as watch does)."""
        assert self.step is not None
        ex = self.exercise
        if delta > 0 and ex is not None and self._passed(ex):
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
        if not self._work_built:
            return
        if isinstance(step, Exercise) and self.saver.file is not None:
            self.saver.file.exercise = step
        hints = self.query_one(HintPanel)
        closed = hints.has_class("-closed")
        if isinstance(step, Exercise) and hints.targeted is not None:
            hints.show_targeted(hints.targeted)
        elif isinstance(step, Exercise):
            hints.show_hints(step.hints, self._hints_used(step))
        hints.set_class(closed, "-closed")
        results = self.query_one(ResultsPanel)
        results.relabel(step.title, self._idle_text(step) if isinstance(step, Exercise) else "")
        for widget in self.query("#typing-area *"):
            widget.refresh()
        self._fit_panels()

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
