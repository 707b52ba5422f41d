"""The learner's workspace: their copies of the exercise stubs, outside the installed package.

Created from the stubs on first use and never overwritten except by `reset`, which keeps a
timestamped backup. Every write is atomic (temp file + rename) so a crash never leaves half a file.
Plain Python: no torch, no Textual.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from tutor import sourcefile
from tutor.course import Course, Exercise


class WorkspaceError(Exception):
    """A workspace file cannot be read or written (disk full, no permission)."""


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old or the new file, never a torn one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(sourcefile.encode(text))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WorkspaceError(f"cannot save {path}: {exc.strerror or exc}") from None


class Workspace:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = home / "workspace"
        self.backups = home / "backups"

    def path(self, exercise: Exercise) -> Path:
        return self.root / exercise.workspace_name

    def ensure(self, course: Course) -> list[Path]:
        """Copy every stub the learner does not have yet; return the files created."""
        created = []
        for exercise in course.exercises:
            target = self.path(exercise)
            if not target.exists():
                try:
                    atomic_write(target, exercise.stub.read_text(encoding="utf-8"))
                except OSError as exc:
                    raise WorkspaceError(f"cannot create {target}: {exc.strerror or exc}") from None
                created.append(target)
        return created

    def read(self, exercise: Exercise) -> str:
        target = self.path(exercise)
        if not target.exists():
            atomic_write(target, exercise.stub.read_text(encoding="utf-8"))
        return sourcefile.read(target)

    def write(self, exercise: Exercise, text: str) -> None:
        atomic_write(self.path(exercise), text)

    def is_modified(self, exercise: Exercise) -> bool:
        target = self.path(exercise)
        return target.exists() and sourcefile.read(target) != exercise.stub.read_text(encoding="utf-8")

    def reset(self, exercise: Exercise) -> Path | None:
        """Restore the stub; return where the learner's version was backed up (None if unchanged)."""
        target = self.path(exercise)
        backup: Path | None = None
        if self.is_modified(exercise):
            stamp = time.strftime("%Y%m%d-%H%M%S")
            backup = self.backups / exercise.chapter_slug / f"{target.stem}.{stamp}{target.suffix}"
            n = 1
            while backup.exists():
                backup = backup.with_name(f"{target.stem}.{stamp}-{n}{target.suffix}")
                n += 1
            backup.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(target, backup)
            except OSError as exc:
                raise WorkspaceError(f"cannot back up {target}: {exc.strerror or exc}") from None
        atomic_write(target, exercise.stub.read_text(encoding="utf-8"))
        return backup
