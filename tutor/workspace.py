"""The learner's workspace: their copies of the exercise stubs, outside the installed package.

Created from the stubs on first use and never overwritten except by `reset`, which keeps a
timestamped backup. Every write is atomic (temp file + rename) so a crash never leaves half a file.
Plain Python: no torch, no Textual.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from tutor import sourcefile
from tutor.course import Course, Exercise

# Editor configuration written into the workspace root so an editor opened there (VS Code,
# Pyright/basedpyright in vim, emacs, Zed...) resolves `torch` from the interpreter running tutor.
PYRIGHT_CONFIG = "pyrightconfig.json"
VSCODE_SETTINGS = ".vscode/settings.json"
EDITOR_LEDGER = ".tutor-editor.json"  # what tutor last wrote, so it never overwrites the learner's edits


def editor_config() -> dict[str, dict[str, Any]]:
    """The editor files for this interpreter, by path relative to the workspace root."""
    python = sys.executable
    site_dirs = sorted({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})
    # "standard" is Pyright's default (basedpyright's own would flag every untyped `ctx`). Every
    # autograd.Function's forward/backward "overrides incompatibly" in torch's stubs, and a
    # load_inline module's functions are unknown until it is built: noise while learning.
    pyright: dict[str, Any] = {
        "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}",
        "typeCheckingMode": "standard",
        "reportIncompatibleMethodOverride": "none",
        "reportAttributeAccessIssue": "warning",
    }
    if sys.prefix != sys.base_prefix:  # a virtualenv: point Pyright at it by name
        prefix = Path(sys.prefix)
        pyright.update(venvPath=str(prefix.parent), venv=prefix.name)
    pyright["extraPaths"] = site_dirs  # also covers conda and system interpreters
    vscode = {"python.defaultInterpreterPath": python, "python.analysis.extraPaths": site_dirs}
    return {PYRIGHT_CONFIG: pyright, VSCODE_SETTINGS: vscode}


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


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
        """Copy every stub the learner does not have yet; return the files created.
        Also keeps the editor configuration in place (`ensure_editor_config`)."""
        self.ensure_editor_config()
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

    def ensure_editor_config(self) -> list[Path]:
        """Write the editor files (see `editor_config`); return those written.

        A file the learner changed is left alone; one still as we last wrote it (say, for an
        older virtualenv) is brought up to date, so completion follows the Python running tutor."""
        ledger_path = self.root / EDITOR_LEDGER
        try:
            ledger = json.loads(ledger_path.read_text(encoding="utf-8"))
            if not isinstance(ledger, dict):
                ledger = {}
        except (OSError, UnicodeDecodeError, ValueError):
            ledger = {}
        written = []
        for name, data in editor_config().items():
            target = self.root / name
            wanted = _dump(data)
            if target.exists():
                try:
                    current = target.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if current == wanted or current != ledger.get(name):
                    continue  # up to date, or the learner's own settings
            atomic_write(target, wanted)
            ledger[name] = wanted
            written.append(target)
        if written:
            atomic_write(ledger_path, _dump(ledger))
        return written

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
