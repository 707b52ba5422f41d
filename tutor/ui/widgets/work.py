"""The work pane: the editor or the type-along area, with the hint and results panels under
it, built after the first paint (a reading step's first frame does without them). It keeps the
panel stack (Esc closes the most recent), the panels' heights and the cursor of each exercise.

It knows the screen only as a `WorkHost` (a Protocol), so it never imports the screen.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol, cast

from textual.containers import Container, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Static

from tutor.course import Exercise, Passage, Step
from tutor.editor_file import EditorFile
from tutor.i18n import _
from tutor.steps import needs_text
from tutor.ui.host import TutorHost
from tutor.ui.prefs import Prefs
from tutor.ui.saving import Saver
from tutor.ui.widgets.hints import HintPanel, code_suggestion
from tutor.ui.widgets.results import ResultsPanel
from tutor.workspace import WorkspaceError

if TYPE_CHECKING:  # the editor module loads after the first paint
    from tutor.ui.widgets.editor import CodeEditor


class WorkHost(Protocol):
    """What the work pane needs from its screen."""

    saver: Saver
    prefs: Prefs

    @property
    def tutor(self) -> TutorHost: ...

    def kind(self) -> str: ...

    def hints_used(self, ex: Exercise) -> int: ...

    def place_focus(self, widget: Widget) -> None: ...

    def error(self, message: str) -> None: ...

    def notify(self, message: str, *, timeout: float | None = None) -> None: ...


class WorkPane(Vertical):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._started = False
        self._ready = asyncio.Event()
        self.panels: list[str] = []  # open panels, most recent last (Esc closes the last)

    @property
    def host(self) -> WorkHost:
        return cast(WorkHost, self.screen)

    @property
    def editor(self) -> CodeEditor:
        # Imported when the pane is built, after the first paint (TextArea and its syntax
        # support cost ~10 ms of start-up that a reading step does not need).
        from tutor.ui.widgets.editor import CodeEditor

        return self.query_one("#editor", CodeEditor)

    async def build(self) -> None:
        """Mount the editor, type-along area and panels (once). A reading step's first paint
        does without them (they are built just after it); an exercise waits for them."""
        if self._ready.is_set():
            return
        if not self._started:
            from tutor.ui.widgets.editor import CodeEditor

            self._started = True
            switcher = ContentSwitcher(
                CodeEditor.for_code(id="editor", language_later=True),
                Container(id="typing-area"),
                id="work",
                initial="editor",
            )
            await self.mount_all([switcher, HintPanel(id="hints"), ResultsPanel(id="results")])
            self._ready.set()
        await self._ready.wait()

    @property
    def built(self) -> bool:
        return self._ready.is_set()

    def fit(self) -> None:
        """Cap the hint and results panels so the editor keeps 12 lines (8 when the terminal
        is short), and keep the cursor line in view."""
        if not self.is_mounted or not self.built:
            return
        height = self.screen.size.height
        keep = 12 if height >= 32 else 8
        # header, step title (two rows when a long title wraps), footer; the editor's border
        title = max(1, self.screen.query_one("#step-title", Static).size.height)
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
        if self.host.kind() == "exercise":
            self.call_after_refresh(self._cursor_into_view)

    def _cursor_into_view(self) -> None:
        if not self.built:
            return
        editor = self.editor
        if editor.display:
            editor.scroll_cursor_visible()

    def show(self, step: Step) -> None:
        self.host.saver.file = None
        self.panels = []
        if not self.built:  # a reading step before the work pane exists
            self.host.place_focus(self.screen.query_one("#guide-scroll"))
            return
        switcher = self.query_one("#work", ContentSwitcher)
        hints = self.query_one(HintPanel)
        results = self.query_one(ResultsPanel)
        results.show_idle()
        if isinstance(step, Exercise):
            self.open_exercise(step)
            switcher.current = "editor"
            self.show_hints(step, self.host.hints_used(step), None)
            results.show_idle(self.idle_text(step))
            if results.open:
                self.panels.append("results")
            self.host.place_focus(self.query_one("#editor"))
        elif isinstance(step, Passage):
            hints.show_hints((), 0)
            switcher.current = "typing-area"
            self._mount_passage(step)
        else:
            hints.show_hints((), 0)
            self.query_one("#typing-area", Container).remove_children()
            self.screen.query_one("#guide-scroll").focus()

    def open_exercise(self, ex: Exercise) -> None:
        editor = self.editor
        # The border names the file as the guide does (and as `tutor watch` and your own
        # editor see it): workspace/<chapter>/<file>, under the tutor home.
        editor.border_title = f"workspace/{ex.workspace_name}"
        f = EditorFile(self.host.tutor.workspace, ex)
        try:
            text = f.load()
        except (WorkspaceError, OSError, UnicodeDecodeError) as exc:
            # Show the stub read-only and never autosave over a file we could not read.
            self.host.error(
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
        kept = self.host.saver.unsaved_text(ex.id)  # what the disk refused earlier this session
        self.host.saver.file = f
        editor.read_only = False
        editor.load_text(kept if kept is not None else text)  # kept: autosave retries
        editor.move_cursor(self._saved_cursor(ex, editor), center=True)

    def _saved_cursor(self, ex: Exercise, editor: CodeEditor) -> tuple[int, int]:
        """Where the learner left the cursor in this exercise (clamped to the text)."""
        row, _sep, col = self.host.prefs.get(f"cursor.{ex.id}", "0,0").partition(",")
        try:
            r = max(0, min(int(row), editor.document.line_count - 1))
            return r, max(0, min(int(col or 0), len(editor.document[r])))
        except ValueError:
            return 0, 0

    def remember_cursor(self) -> None:
        f = self.host.saver.file
        if f is not None:
            row, col = self.editor.cursor_location
            self.host.prefs.set(f"cursor.{f.exercise.id}", f"{row},{col}")

    def _mount_passage(self, step: Passage) -> None:
        area = self.query_one("#typing-area", Container)
        area.remove_children()
        code = step.code()
        from tutor.ui.widgets.typealong import TypeAlong

        widget = TypeAlong(passage_key=step.key, target=code, progress=self.host.tutor.progress)
        area.mount(widget)
        self.call_after_refresh(widget.focus)

    def typed_passage(self) -> str | None:
        """The finished type-along's text on a passage step, else None."""
        try:
            from tutor.ui.widgets.typealong import TypeAlong
        except ImportError:
            return None
        done = [w for w in self.query(TypeAlong) if w.session.finished]
        return done[0].typed_text if done else None

    def on_code_editor_escape_pressed(self) -> None:
        """Esc in the editor closes the most recently opened panel; focus stays put."""
        while self.panels:
            name = self.panels.pop()
            panel = self.query_one(HintPanel) if name == "hints" else self.query_one(ResultsPanel)
            if panel.open:
                panel.close()
                self.fit()
                return

    def opened(self, name: str) -> None:
        if name in self.panels:
            self.panels.remove(name)
        self.panels.append(name)
        self.fit()

    def toggle_panels(self) -> None:
        if not self.built:
            return
        hints, results = self.query_one(HintPanel), self.query_one(ResultsPanel)
        if hints.open or results.open:
            hints.close()
            results.close()
            self.panels = []
        else:
            for name, panel in (("hints", hints), ("results", results)):
                if panel.reopen():
                    self.panels.append(name)
            if not self.panels:
                self.host.notify(
                    _("No hints or results yet: Tab on an empty line gives a hint, Ctrl+R checks."), timeout=4
                )
        self.fit()

    def scroll_panel(self, direction: int) -> None:
        if not self.built:
            return
        results, hints = self.query_one(ResultsPanel), self.query_one(HintPanel)
        panel: VerticalScroll | None = results if results.open else hints if hints.open else None
        if panel is None:
            self.host.notify(_("No panel is open to scroll."), timeout=2)
            return
        step = max(1, panel.scrollable_content_region.height - 1)
        panel.scroll_relative(y=direction * step, animate=False)

    def show_hints(self, ex: Exercise, revealed: int, row: int | None) -> None:
        """The revealed hints; the newest one's code shows as ghost text on `row` (the empty
        line where the learner asked), nowhere else."""
        panel = self.query_one(HintPanel)
        panel.show_hints(ex.hints, revealed)
        latest = ex.hints[revealed - 1] if revealed else ""
        self.editor.set_ghost(code_suggestion(latest), row)
        if panel.open:
            self.opened("hints")

    def idle_text(self, ex: Exercise) -> str:
        if ex.needs.device_here(self.host.tutor.gpus or 0)[0] is None:
            return _("This exercise {needs}: here its check will be skipped.", needs=needs_text(ex.needs))
        return ""

    def relocalize(self, step: Step) -> None:
        """The step again in the language just chosen: hint and results panels, type-along;
        the editor's text, cursor and undo history stay as they are (same file, same id)."""
        if not self.built:
            return
        saver = self.host.saver
        if isinstance(step, Exercise) and saver.file is not None:
            saver.file.exercise = step
        hints = self.query_one(HintPanel)
        closed = hints.has_class("-closed")
        if isinstance(step, Exercise) and hints.targeted is not None:
            hints.show_targeted(hints.targeted)
        elif isinstance(step, Exercise):
            hints.show_hints(step.hints, self.host.hints_used(step))
        hints.set_class(closed, "-closed")
        results = self.query_one(ResultsPanel)
        results.relabel(step.title, self.idle_text(step) if isinstance(step, Exercise) else "")
        for widget in self.query("#typing-area *"):
            widget.refresh()
        self.fit()
