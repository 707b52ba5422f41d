"""The hashes of the course's judging files (checkers, their helpers, reference solutions),
recorded when the package is built, and their verification before a check uses them.

A learner's code runs as the learner and can rewrite any file tutor can read; the runner
already judges with the copies it read when it started, and this catches a file changed on
disk before a later `tutor check` or app session reads it. A source checkout has no record
(authors edit checkers), so there nothing is verified. No torch, no Textual.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

MANIFEST = "COURSE-SHA256.json"
PATTERNS = ("lessons/*/checks/*.py", "solutions/*/*.py", "solutions/*/*/*.py")


class CourseFileChanged(Exception):
    """A judging file differs from the one installed with tutor."""


def digests(root: Path) -> dict[str, str]:
    """{path relative to the course root: sha256} of every judging file under `root`."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for pattern in PATTERNS
        for path in sorted(root.glob(pattern))
        if "__pycache__" not in path.parts
    }


def write_manifest(root: Path, target: Path) -> None:
    target.write_text(json.dumps(digests(root), indent=0, sort_keys=True) + "\n", encoding="utf-8")


class Verifier:
    """Checks a judging file's bytes against the installed record (when there is one)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        try:
            self.recorded: dict[str, str] | None = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.recorded = None  # a source checkout
        except (OSError, ValueError):
            self.recorded = {}  # a damaged record verifies nothing as unchanged

    def verify(self, path: Path, data: bytes) -> None:
        """Raise CourseFileChanged when `path` is a judging file whose bytes differ from the record."""
        if self.recorded is None:
            return
        try:
            rel = path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return  # not part of the course (a test's own fixture)
        if not any(Path(rel).match(p) for p in PATTERNS):
            return
        if self.recorded.get(rel) != hashlib.sha256(data).hexdigest():
            raise CourseFileChanged(rel)
