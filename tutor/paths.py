"""Where the course ships and where the learner's files live.

No torch, no Textual: imported by every process.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def course_root() -> Path:
    """The folder holding `lessons/` and `solutions/`.

    A wheel carries them as `tutor/_course/`; a source checkout has them beside the package.
    `TUTOR_COURSE` points elsewhere (used by tests that write broken lessons).
    """
    override = os.environ.get("TUTOR_COURSE")
    if override:
        return Path(override)
    shipped = _PACKAGE / "_course"
    if (shipped / "lessons").is_dir():
        return shipped
    return _REPO


def lessons_dir() -> Path:
    return course_root() / "lessons"


def solutions_dir() -> Path:
    return course_root() / "solutions"


def home_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The learner's tutor home: workspace, progress database, backups.

    Precedence: `--workspace DIR`, then `TUTOR_HOME`, then the per-user data directory.
    """
    if override:
        return Path(override).expanduser().resolve()
    env = os.environ.get("TUTOR_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("pytorch-tutor", appauthor=False))


def cache_dir(home: Path) -> Path:
    """Build and compile caches (C++ extensions, Inductor), reused across runs of the same
    source. `TUTOR_CACHE` shares one between homes (the test suite does)."""
    env = os.environ.get("TUTOR_CACHE")
    return Path(env) if env else home / "cache"
