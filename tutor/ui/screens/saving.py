"""Never lose work: autosave, saves before step changes/checks/quit, and changes on disk.

A mixin of MainScreen (handlers are `on_*` methods, which Textual finds through the MRO).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import work
from textual.timer import Timer
from textual.widgets import TextArea

from tutor.progress import ProgressError
from tutor.ui.autosave import Debouncer, EditorFile
from tutor.ui.messages import SaveDone, post
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.ui.widgets.editor import CodeEditor
from tutor.workspace import WorkspaceError

if TYPE_CHECKING:
    from tutor.ui.app import TutorApp


class SavingMixin:
    """Keeps the editor (#editor) and its workspace file (`_file`) in step."""

    tutor: "TutorApp"  # query_one, notify, set_timer... come from MainScreen
    _file: EditorFile | None = None
    _save_timer: Timer | None = None
    _conflict = False  # a reload question is on screen: don't autosave

    def _init_saving(self) -> None:
        self._file = None
        self._debounce = Debouncer()
        self._save_timer = None
        self._conflict = False
        self._started: set[str] = set()  # exercises marked started this session
        self._unsaved: dict[str, str] = {}  # exercise id -> text the disk refused
        self._last_error = ("", 0.0)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id != "editor":
            return
        f = self._file
        if f is None or self._conflict:
            return
        if self.query_one("#editor", CodeEditor).text == f.saved_text:
            return  # a load, or an undo back to the saved text
        delay = self._debounce.touch(time.monotonic())
        if self._save_timer is not None:
            self._save_timer.stop()
        # Textual timers must not have a zero interval (the timer loop divides by it).
        self._save_timer = self.set_timer(max(delay, 0.01), self._autosave)

    def _autosave(self) -> None:
        """The debounced save: take the text now, write it from a thread (fsync can be slow)."""
        self._save_timer = None
        self._debounce.clear()
        f = self._file
        if f is None or self._conflict:
            return
        text = self.query_one("#editor", CodeEditor).text
        if text != f.saved_text:
            self._write_in_background(f, text, f.ticket())

    @work(thread=True, group="autosave", exit_on_error=False)
    def _write_in_background(self, f: EditorFile, text: str, ticket: int) -> None:
        try:
            post(self, SaveDone(f, f.save(text, ticket)))
        except WorkspaceError as exc:
            post(self, SaveDone(f, "error", str(exc)))

    def on_save_done(self, message: SaveDone) -> None:
        if message.outcome == "error":
            self.error(message.error)
        elif message.outcome == "conflict" and message.file is self._file and not self._conflict:
            self._ask_reload(message.file)
        elif message.outcome == "saved":
            self._note_started(message.file)

    def save_now(self, ask: bool = True) -> bool:
        """Write the editor to the workspace now if it changed. False when it could not.
        On a conflict with a change on disk, ask the learner (unless `ask` is False: quitting)."""
        return self._save(ask) == "ok"

    def _save(self, ask: bool) -> str:
        """save_now's outcome: ok, conflict or error."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        self._debounce.clear()
        f = self._file
        if f is None:
            return "ok"
        if self._conflict:
            return "conflict"
        text = self.query_one("#editor", CodeEditor).text
        try:
            outcome = f.save(text, f.ticket())
        except WorkspaceError as exc:
            self.error(str(exc))
            return "error"
        if outcome == "conflict":
            if ask:
                self._ask_reload(f)
            return "conflict"
        if outcome == "saved":
            self._note_started(f)
        return "ok"

    def leave_exercise(self) -> bool:
        """Before the editor shows another step: save. On a conflict stay (the reload question
        is up); when the disk refuses the write, keep the text in memory for this session."""
        f = self._file
        outcome = self._save(ask=True)
        if outcome == "conflict":
            return False
        if outcome == "error" and f is not None:
            self._unsaved[f.exercise.id] = self.query_one("#editor", CodeEditor).text
        return True

    def unsaved_text(self, exercise_id: str) -> str | None:
        """Text kept in memory because saving it failed (taken: the editor holds it again)."""
        return self._unsaved.pop(exercise_id, None)

    def _note_started(self, f: EditorFile) -> None:
        """The first save of an exercise this session marks it in progress."""
        if f.exercise.id in self._started:
            return
        self._started.add(f.exercise.id)
        try:
            self.tutor.progress.mark_started(f.exercise.id)
        except ProgressError as exc:
            self.error(str(exc))
        self.refresh_status()

    def save_for_quit(self) -> str:
        """At quit: save. If that fails (the file changed on disk too, or the disk is full),
        keep the editor's text aside; return a line for the terminal, or ""."""
        if self._file is None or self.save_now(ask=False):
            return ""
        text = self.query_one("#editor", CodeEditor).text
        try:
            return f"tutor: your editor's version was kept in {self._file.save_aside(text)}"
        except WorkspaceError as exc:
            return f"tutor: your last changes could not be saved: {exc}"

    def _watch_disk(self) -> None:
        f = self._file
        if f is None or self._conflict:
            return
        text = f.changed_on_disk()
        if text is None:
            return
        if text == self.query_one("#editor", CodeEditor).text:
            f.accept(text)
        else:
            self._ask_reload(f)

    def _ask_reload(self, f: EditorFile) -> None:
        self._conflict = True

        def answered(load: bool | None) -> None:
            self._conflict = False
            if f is not self._file:
                return
            editor = self.query_one("#editor", CodeEditor)
            if load:
                try:
                    text = f.path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    self.error(f"cannot read {f.path.name}: {exc}")
                    return
                f.accept(text)
                editor.load_text(text)
            else:
                f.ignore_disk()
                self.save_now()

        self.app.push_screen(ConfirmScreen(
            f"{f.path.name} changed on disk (another editor?) and differs from the editor.\n"
            "Load the version on disk? (No keeps yours and saves it over the file.)",
            yes="Load from disk", no="Keep mine"), answered)

    def error(self, message: str) -> None:
        """One line, never a traceback; the same message at most every 10 s (autosave retries)."""
        now = time.monotonic()
        if self._last_error[0] == message and now - self._last_error[1] < 10:
            return
        self._last_error = (message, now)
        self.notify(message.splitlines()[0] if message else "error", severity="error", timeout=8)
