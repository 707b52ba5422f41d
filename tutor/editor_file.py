"""Never lose work: the learner's file behind the app's editor and when to save it (the save
helper that drives it is tutor/ui/saving.py). Plain Python, no Textual."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tutor import sourcefile
from tutor.course import Exercise
from tutor.workspace import Workspace, WorkspaceError, atomic_write


class Debouncer:
    """Save `quiet` s after the last keystroke, but never later than `cap` s after the first
    unsaved one, so a learner typing non-stop still gets saved every second."""

    def __init__(self, quiet: float = 0.5, cap: float = 1.0) -> None:
        self.quiet = quiet
        self.cap = cap
        self.first: float | None = None

    def touch(self, now: float) -> float:
        """A keystroke at `now`: return the delay until the save should happen."""
        if self.first is None:
            self.first = now
        return max(0.0, min(self.quiet, self.first + self.cap - now))

    def clear(self) -> None:
        self.first = None


class EditorFile:
    """The learner's workspace file behind the editor: the text last saved or loaded, and
    the file's mtime then, to tell our own writes from someone else's (another editor).

    Autosaves write from a worker thread (an fsync can take tens of ms), other saves from the
    UI thread: a lock serialises them, and tickets (taken on the UI thread, in order) make a
    late, older save a no-op instead of overwriting newer text."""

    def __init__(self, workspace: Workspace, exercise: Exercise) -> None:
        self.workspace = workspace
        self.exercise = exercise
        self.saved_text: str | None = None
        self.mtime_ns: int | None = None
        self._lock = threading.RLock()
        self._tickets = 0
        self._written = 0  # the newest ticket saved

    def ticket(self) -> int:
        """Take a place in the save order (call on the UI thread, with the text to save)."""
        self._tickets += 1
        return self._tickets

    @property
    def path(self) -> Path:
        return self.workspace.path(self.exercise)

    def _stat(self) -> int | None:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return None

    def load(self) -> str:
        """Read the file (created from the stub on first use). Raises WorkspaceError/OSError,
        and WorkspaceError when its bytes do not decode: saving the replacement characters
        the decoder put in their place would destroy them."""
        text = self.workspace.read(self.exercise)
        if "\ufffd" in text:
            raw = self.path.read_bytes()
            if sourcefile.encode(text) != raw:
                raise WorkspaceError(
                    "some of its bytes are not valid text in its encoding "
                    "(fix them in another editor; the file is left untouched)"
                )
        self.saved_text = text
        self.mtime_ns = self._stat()
        return text

    def save(self, text: str, ticket: int | None = None) -> str:
        """Write `text` atomically. Returns "saved", "unchanged" (nothing to write, or a newer
        save already happened) or "conflict": the file changed on disk meanwhile, so nothing
        was written (the caller asks the learner). Raises WorkspaceError."""
        ticket = self.ticket() if ticket is None else ticket
        with self._lock:
            if ticket < self._written or text == self.saved_text:
                return "unchanged"
            if self.saved_text is not None and self.changed_on_disk() is not None:
                return "conflict"
            self.workspace.write(self.exercise, text)
            self.saved_text = text
            self.mtime_ns = self._stat()
            self._written = ticket
            return "saved"

    def changed_on_disk(self) -> str | None:
        """The file's new text if someone else changed it since we saved or loaded it."""
        if not self._lock.acquire(blocking=False):
            return None  # our own save is in progress; look again next time
        try:
            return self._changed_on_disk()
        finally:
            self._lock.release()

    def _changed_on_disk(self) -> str | None:
        mtime = self._stat()
        if mtime is None or mtime == self.mtime_ns:
            return None
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if text == self.saved_text:
            self.mtime_ns = mtime  # touched, not changed
            return None
        return text

    def accept(self, text: str) -> None:
        """Take the disk's version as the saved state (after a reload)."""
        with self._lock:
            self.saved_text = text
            self.mtime_ns = self._stat()

    def ignore_disk(self) -> None:
        """Keep the editor's version: forget the disk change so the next save overwrites it."""
        with self._lock:
            self.mtime_ns = self._stat()
            self.saved_text = None

    def save_aside(self, text: str) -> Path:
        """Keep `text` beside the backups when it cannot go to the file (a conflict at quit)."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = (
            self.workspace.backups / self.exercise.chapter_slug / f"{self.path.stem}.editor-{stamp}{self.path.suffix}"
        )
        atomic_write(aside, text)
        return aside
