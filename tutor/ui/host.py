"""What the screens need from the app, as a Protocol.

Screens and helpers type the app through `TutorHost` instead of importing `tutor.ui.app`, which
imports them: so there is no import circle inside tutor/ui (app -> screens -> host).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual.binding import Binding

from tutor.course import Chapter, Course
from tutor.progress import Progress
from tutor.session import LearnerSession
from tutor.steps import Snapshot
from tutor.workspace import Workspace

if TYPE_CHECKING:
    from tutor.runner.client import Runner


class TutorHost(Protocol):
    home: Path
    progress: Progress
    session: LearnerSession  # the learning rules (tutor/session.py)
    workspace: Workspace

    @property
    def course(self) -> Course: ...

    @property
    def gpus(self) -> int | None: ...

    @property
    def runner(self) -> "Runner": ...

    def cancel_run(self) -> None: ...

    def warm_up(self) -> None: ...

    def snapshot(self) -> Snapshot: ...

    def last_position(self) -> tuple[int, str | None] | None: ...

    def update_header(self, chapter: Chapter, snap: Snapshot) -> None: ...

    def all_bindings(self) -> list[Binding]: ...

    def switch_language(self, lang: str) -> None: ...
