"""The messages that worker and watcher threads post to the UI, for both apps (post_message is
thread-safe and, unlike call_from_thread, never blocks a worker on an app that is shutting
down)."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from tutor.course import Exercise, Passage
from tutor.runner.protocol import Event, Verdict
from tutor.editor_file import EditorFile


class RunProgress(Message):
    def __init__(self, gen: int, event: Event) -> None:
        super().__init__()
        self.gen = gen
        self.event = event


class RunDone(Message):
    """A verdict: of an exercise's check, or of a typed-along passage run as a program."""

    def __init__(self, gen: int, exercise: Exercise | Passage, verdict: Verdict) -> None:
        super().__init__()
        self.gen = gen
        self.exercise = exercise
        self.verdict = verdict


class SaveDone(Message):
    """A background autosave finished: outcome is saved, unchanged, conflict or error."""

    def __init__(self, file: EditorFile, outcome: str, error: str = "") -> None:
        super().__init__()
        self.file = file
        self.outcome = outcome
        self.error = error


class RunnerReady(Message):
    def __init__(self, gpus: int) -> None:
        super().__init__()
        self.gpus = gpus


class RunnerFailed(Message):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class FileSaved(Message):
    """`tutor watch`'s file watcher saw a save."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path


class WatchFailed(Message):
    """`tutor watch`'s file watcher stopped (the poll goes on)."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


def post(target: object, message: Message) -> None:
    """Post from a worker thread; a closed app just drops it."""
    try:
        target.post_message(message)  # type: ignore[attr-defined]
    except RuntimeError:
        pass
