"""Guide pages as Rich drew them, kept on disk, so that opening a page seen before paints it
without parsing Markdown.

Parsing and drawing a page needs markdown-it, Rich's Markdown and Pygments (about 25 ms to
import on a small CPU) and the render itself (3-5 ms a screen). A page drawn once at a width
is stored as its lines of (text, style) segments; the next start at that width (the usual
case: a learner comes back to the step they left) replays them, already highlighted. The key
holds the page's text, the width, the renderer's version and Rich's own files, so an edited
page, a resized pane or an upgraded Rich draws afresh. Any failure to read or write the cache
is ignored: it only ever saves time.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import rich
from rich.segment import Segment
from rich.style import Style

# Bump when what GuideView draws changes (its Markdown elements, code theme, padding).
RENDERER_VERSION = "2"  # 2: code blocks wrap at token boundaries (tutor/ui/codewrap.py)
MAX_FILES = 400  # about 20-60 KB each; the oldest go first


def _rich_stamp() -> str:
    """Changes when Rich is upgraded (its Markdown module is rewritten)."""
    try:
        return str(os.stat(Path(rich.__file__).with_name("markdown.py")).st_mtime_ns)
    except OSError:
        return "?"


class RenderCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._stamp = _rich_stamp()

    def _path(self, source: str, width: int, variant: str) -> Path:
        key = "\0".join((RENDERER_VERSION, self._stamp, variant, str(width), source))
        return self.directory / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")

    def load(self, source: str, width: int, variant: str) -> list[list[Segment]] | None:
        try:
            rows = json.loads(self._path(source, width, variant).read_text(encoding="utf-8"))
            parse = Style.parse
            return [[Segment(text, parse(style) if style else None) for text, style in row] for row in rows]
        except (OSError, ValueError, TypeError):  # missing, truncated or from another version
            return None

    def store(self, source: str, width: int, variant: str, lines: list[list[Segment]]) -> None:
        rows = [
            [[seg.text, str(seg.style) if seg.style else ""] for seg in line if not seg.control and seg.text]
            for line in lines
        ]
        path = self._path(source, width, variant)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)
            self._prune()
        except OSError:
            pass

    def _prune(self) -> None:
        files = list(self.directory.glob("*.json"))
        if len(files) > MAX_FILES:
            files.sort(key=lambda p: p.stat().st_mtime)
            for old in files[: len(files) - MAX_FILES]:
                old.unlink(missing_ok=True)
