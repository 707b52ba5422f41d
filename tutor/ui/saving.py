"""Never lose work: autosave, saves before step changes/checks/quit, and changes on disk.

`Saver` is a helper the main screen owns (composition, not a mixin): it is given the editor,
the widget that owns its timers and workers, and callbacks for errors and "started". It never
imports the app or the screen, so tutor/ui has no import circle.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, Callable

from textual.timer import Timer
from textual.widget import Widget

from tutor.i18n import _
from tutor.progress import Progress, ProgressError
from tutor.editor_file import Debouncer, EditorFile
from tutor.ui.messages import SaveDone, post
from tutor.ui.screens.confirm import ConfirmScreen
from tutor.workspace import WorkspaceError

if TYPE_CHECKING:  # the editor module loads after the first paint
    from tutor.ui.widgets.editor import CodeEditor


class Saver:
    """Keeps the editor and its workspace file (`file`) in step."""

    def __init__(
        self,
        owner: Widget,
        editor: Callable[[], CodeEditor],
        progress: Callable[[], Progress],
        error: Callable[[str], None],
        started: Callable[[], None],
    ) -> None:
        self.owner = owner  # runs timers and workers; receives SaveDone
        self._editor = editor
        self._progress = progress
        self._error = error
        self._on_started = started
        self.file: EditorFile | None = None
        self._debounce = Debouncer()
        self._timer: Timer | None = None
        self.conflict = False  # a reload question is on screen: don't autosave
        self._started: set[str] = set()  # exercises marked started this session
        self._unsaved: dict[str, str] = {}  # exercise id -> text the disk refused

    @property
    def editor(self) -> CodeEditor:
        return self._editor()

    # -- autosave -------------------------------------------------------------------------------

    def text_changed(self) -> None:
        """The editor's text changed: (re)arm the debounced save."""
        f = self.file
        if f is None or self.conflict or self.editor.text == f.saved_text:
            return  # a load, or an undo back to the saved text
        delay = self._debounce.touch(time.monotonic())
        if self._timer is not None:
            self._timer.stop()
        # Textual timers must not have a zero interval (the timer loop divides by it).
        self._timer = self.owner.set_timer(max(delay, 0.01), self._autosave)

    def _autosave(self) -> None:
        """The debounced save: take the text now, write it from a thread (fsync can be slow)."""
        self._timer = None
        self._debounce.clear()
        f = self.file
        if f is None or self.conflict:
            return
        text = self.editor.text
        if text != f.saved_text:
            self.owner.run_worker(
                partial(self._write, f, text, f.ticket()), thread=True, group="autosave", exit_on_error=False
            )

    def _write(self, f: EditorFile, text: str, ticket: int) -> None:
        try:
            post(self.owner, SaveDone(f, f.save(text, ticket)))
        except WorkspaceError as exc:
            post(self.owner, SaveDone(f, "error", str(exc)))

    def save_done(self, message: SaveDone) -> None:
        if message.outcome == "error":
            self._error(message.error)
        elif message.outcome == "conflict" and message.file is self.file and not self.conflict:
            self.ask_reload(message.file)
        elif message.outcome == "saved":
            self._note_started(message.file)

    # -- explicit saves -------------------------------------------------------------------------

    def save_now(self, ask: bool = True) -> bool:
        """Write the editor to the workspace now if it changed. False when it could not.
        On a conflict with a change on disk, ask the learner (unless `ask` is False: quitting)."""
        return self._save(ask) == "ok"

    def _save(self, ask: bool) -> str:
        """save_now's outcome: ok, conflict or error."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._debounce.clear()
        f = self.file
        if f is None:
            return "ok"
        if self.conflict:
            return "conflict"
        text = self.editor.text
        try:
            outcome = f.save(text, f.ticket())
        except WorkspaceError as exc:
            self._error(str(exc))
            return "error"
        if outcome == "conflict":
            if ask:
                self.ask_reload(f)
            return "conflict"
        if outcome == "saved":
            self._note_started(f)
        return "ok"

    def leave(self) -> bool:
        """Before the editor shows another step: save. On a conflict stay (the reload question
        is up); when the disk refuses the write, keep the text in memory for this session."""
        f = self.file
        outcome = self._save(ask=True)
        if outcome == "conflict":
            return False
        if outcome == "error" and f is not None:
            self._unsaved[f.exercise.id] = self.editor.text
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
            self._progress().mark_started(f.exercise.id)
        except ProgressError as exc:
            self._error(str(exc))
        self._on_started()

    def save_for_quit(self) -> str:
        """At quit: save. If that fails (the file changed on disk too, or the disk is full),
        keep the editor's text aside; return a line for the terminal, or ""."""
        if self.file is None or self.save_now(ask=False):
            return ""
        text = self.editor.text
        try:
            return "tutor: " + _("your editor's version was kept in {path}", path=self.file.save_aside(text))
        except WorkspaceError as exc:
            return "tutor: " + _("your last changes could not be saved: {error}", error=exc)

    # -- someone else changed the file ----------------------------------------------------------

    def watch_disk(self) -> None:
        f = self.file
        if f is None or self.conflict:
            return
        text = f.changed_on_disk()
        if text is None:
            return
        if text == self.editor.text:
            f.accept(text)
        else:
            self.ask_reload(f)

    def _reload_in_place(self, text: str) -> None:
        """Show the disk's version with the cursor and the view where they were (clamped to
        the new text), not on line 1."""
        editor = self.editor
        (row, col), top = editor.cursor_location, editor.scroll_offset.y
        editor.load_text(text)
        row = max(0, min(row, editor.document.line_count - 1))
        editor.move_cursor((row, min(col, len(editor.document[row]))))
        editor.scroll_to(y=top, animate=False, immediate=True)
        editor.scroll_cursor_visible()

    def ask_reload(self, f: EditorFile) -> None:
        self.conflict = True

        def answered(load: bool | None) -> None:
            self.conflict = False
            if f is not self.file:
                return
            if load:
                try:
                    text = f.path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    self._error(_("cannot read {name}: {error}", name=f.path.name, error=exc))
                    return
                f.accept(text)
                self._reload_in_place(text)
            else:
                f.ignore_disk()
                self.save_now()

        self.owner.app.push_screen(
            ConfirmScreen(
                _(
                    "{name} changed on disk (another editor?) and differs from the editor.\n"
                    "Load the version on disk? (No keeps yours and saves it over the file.)",
                    name=f.path.name,
                ),
                yes=_("Load from disk"),
                no=_("Keep mine"),
            ),
            answered,
        )
