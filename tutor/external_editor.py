"""The learner's own editor: $VISUAL, else $EDITOR (as git and crontab choose). Plain Python."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from tutor.i18n import _


class EditorError(Exception):
    """The editor could not be started: one line for the learner."""


def editor_command() -> list[str] | None:
    """$VISUAL, else $EDITOR, split as a shell would (`code --wait` works); None when unset."""
    for name in ("VISUAL", "EDITOR"):
        raw = os.environ.get(name, "").strip()
        if raw:
            try:
                return shlex.split(raw)
            except ValueError:
                raise EditorError(
                    _("cannot read ${name} ({raw}): unbalanced quotes", name=name, raw=repr(raw))
                ) from None
    return None


def open_in_editor(command: list[str], path: Path) -> int:
    """Run the editor on `path` and wait for it; return its exit status."""
    try:
        return subprocess.call([*command, str(path)])
    except OSError as exc:
        raise EditorError(
            _("cannot start the editor {name}: {error}", name=repr(command[0]), error=exc.strerror or exc)
        ) from None
