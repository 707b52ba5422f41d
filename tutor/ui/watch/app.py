"""`tutor watch`: a small Textual app around WatchScreen. It owns the Progress store, the
Workspace, the Runner (through the session) and the file watcher.

Never import torch here: the runner imports it in its own process.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from tutor import paths
from tutor.course import Course, Exercise
from tutor.i18n import _
from tutor.progress import Progress, ProgressError
from tutor.runner.client import Runner
from tutor.ui.messages import FileSaved, WatchFailed, post
from tutor.ui.watch.screen import WatchScreen
from tutor.watch_session import RunnerLike, WatchSession
from tutor.file_watcher import FileWatcher
from tutor.workspace import Workspace, WorkspaceError


class WatchApp(App[int]):
    CSS_PATH = "../tutor.tcss"  # one stylesheet for the whole project (see its watch block)
    TITLE = "tutor watch"
    ENABLE_COMMAND_PALETTE = False  # nine single keys, all in the footer: no palette needed
    BINDINGS = [
        # Translated once, at import: `tutor watch` has no language switch.
        Binding(
            "ctrl+c",
            "quit",
            _("Quit"),
            id="watch-ctrl-c",
            show=False,
            priority=True,
            tooltip=_("Stop watching (as q does)"),
        ),
    ]

    def __init__(
        self,
        course: Course,
        home: Path,
        start: Exercise,
        device: str = "auto",
        *,
        runner_factory: Callable[[], RunnerLike] | None = None,
        force_polling: bool | None = None,
    ) -> None:
        super().__init__()
        self.home = home
        self.progress = Progress(home)  # raises ProgressError: run_watch reports it
        workspace = Workspace(home)
        factory = runner_factory or (lambda: Runner(cache_dir=paths.cache_dir(home), device=device))
        self.session = WatchSession(course, self.progress, workspace, factory, start, device)
        self.session.go_to(start)
        self.watcher = FileWatcher(
            workspace.root,
            lambda path: post(self, FileSaved(path)),
            lambda reason: post(self, WatchFailed(reason)),
            force_polling=force_polling,
        )
        self._closed = False

    def get_default_screen(self) -> Screen[Any]:
        return WatchScreen(self.session)

    @property
    def watch_screen(self) -> WatchScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, WatchScreen)
        return screen

    def watch_file(self, path: Path) -> None:
        self.watcher.target = path

    def start_watching(self) -> None:
        self.watcher.start()

    # The watcher thread posts to the app (the screen may not exist yet when it starts); the
    # watch screen, under any dialog, decides what to do.
    def on_file_saved(self, message: FileSaved) -> None:
        self.watch_screen.file_saved(message.path)

    def on_watch_failed(self, message: WatchFailed) -> None:
        self.watch_screen.notify(
            _("{reason}. Press r to check after each save.", reason=message.reason), severity="error", timeout=15
        )

    def close_resources(self) -> None:
        """Stop watching, stop the runner, close the database (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.watcher.stop()
        self.session.close()
        self.progress.close()


def run_watch(course: Course, home: Path, start: Exercise, device: str = "auto") -> int:
    """Watch until the learner quits; return the process exit code."""
    try:
        app = WatchApp(course, home, start, device)
    except (ProgressError, WorkspaceError) as exc:
        print(f"tutor: {exc}", file=sys.stderr)
        return 1
    try:
        app.run()
        print(
            _(
                "Stopped watching at {id}. `tutor watch` continues there; `tutor start` opens the app.",
                id=app.session.current.id,
            ),
            file=sys.stderr,
        )
    finally:
        app.close_resources()  # stops the runner: up to a few seconds if it is mid-start
    return app.return_code or 0
