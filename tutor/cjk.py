"""Line breaking for Chinese text in Rich and Textual.

Rich (and Textual's Content, which borrows Rich's `divide_line`) breaks lines only at spaces.
Chinese has no spaces between words, so a sentence after inline code (`backward()` 则逆序…)
is one long "word": it jumps whole to the next line and leaves a short ragged line behind,
or is chopped mid-line with the rest of the paragraph out of step. Chinese text may break
between any two characters, except before closing punctuation (，。）…) and after opening
punctuation (（“《), the basic kinsoku rule; and a paragraph does not end on a line holding
one character alone (the character before it comes down too). A path or name longer than
the line breaks after a `/`, `_`, `.` or `-` rather than at the edge. `divide_line` below does
that and is installed in place of Rich's, in the app (tutor/ui) and in the CLI's console
(`tutor check`, `tutor hint`), which must not need Textual; text without wide characters
takes Rich's own path, unchanged.
"""

from __future__ import annotations

import functools
import re

import rich._wrap
import rich.text
from rich.cells import cell_len, chop_cells

_WIDE = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
_CLOSE = "，。、：；！？）》」』”’…,.;:!?)]}%"
_OPEN = "（《「『“‘"
# A unit: one wide character or a run of other non-space characters, with the opening
# punctuation before it and the closing punctuation after it, then its trailing spaces.
_O, _C = re.escape(_OPEN), re.escape(_CLOSE)
_UNIT_PATTERN = rf"\s*[{_O}]*(?:[{_WIDE}]|[^\s{_WIDE}{_O}]+?(?=[\s{_WIDE}{_O}]|$))[{_C}]*\s*"


@functools.cache
def _unit() -> re.Pattern[str]:
    # Compiled on the first wide text (~5 ms): an English session never pays for it.
    return re.compile(_UNIT_PATTERN)


@functools.cache
def _wide() -> re.Pattern[str]:
    return re.compile(f"[{_WIDE}]")  # ~3 ms to compile: not at import (it delays the first paint)


def has_wide(text: str) -> bool:
    """Whether `text` holds a wide (CJK) character. Most text is ASCII or below U+2E80, which
    `max` tells without the regex."""
    if text.isascii() or max(text) < "\u2e80":
        return False
    return _wide().search(text) is not None


_rich_divide_line = rich._wrap.divide_line


def _cut(piece: str, width: int, least: int) -> int:
    """Where to cut `piece` (at most `width` cells): after its last `/` (a path's directory),
    else `_` or `-` (a name's words), else `.`, when that leaves at least `least` characters."""
    head = chop_cells(piece, width)[0] if width > 0 else ""
    for marks in ("/", "_-", "."):
        cut = max(head.rfind(c) for c in marks) + 1
        if cut > least:
            return cut
    return 0


def _fold(unit: str, width: int, room: int) -> list[str]:
    """A unit longer than `width` cells in pieces that fit: the first in the `room` left on the
    current line when it can end at a separator (`在 exercises/`, not 在 alone), else "" (the
    unit starts a line); the others cut at a separator, else at the edge."""
    cut = _cut(unit, room, 0) if room > 0 else 0
    pieces, unit = [unit[:cut]], unit[cut:]
    while cell_len(unit.rstrip()) > width:
        head = chop_cells(unit, width)[0] or unit[0]  # a wide character wider than the line
        head = head[: _cut(head, width, width // 3)] or head
        pieces.append(head)
        unit = unit[len(head) :]
    return pieces + [unit] if unit else pieces


_ORPHAN = re.compile(rf"[{_O}]*[{_WIDE}][{_C}]*\s*")


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Rich's `divide_line` (the offsets where `text` breaks to fit `width` cells), with
    break opportunities between wide characters."""
    if not has_wide(text):
        return _rich_divide_line(text, width, fold)
    breaks: list[int] = []
    offset = 0  # cells used on the current line
    position = 0
    line: list[int] = []  # where the current line's units start (none for a folded piece)
    previous: list[int] = []  # the same for the line before
    while position < len(text):
        match = _unit().match(text, position)
        if match is None or match.end() == position:  # cannot happen; never loop forever
            break
        start, end = match.span()
        unit = match.group(0)
        length = cell_len(unit.rstrip())
        # Its trailing space must fit too: Rich strips a line's overhang by characters, not
        # cells, so a space past the edge after wide text turns the last character into "…".
        need = cell_len(unit) if end < len(text) else length
        if width - offset >= need:
            offset += cell_len(unit)
            line.append(start)
        elif length > width and fold:
            pieces = _fold(unit, width, width - offset if offset else 0)
            if pieces[0]:  # the first piece ends the current line
                line.append(start)
            start += len(pieces[0])
            for piece in pieces[1:]:
                if start:
                    breaks.append(start)
                    previous, line = line, [start]
                start += len(piece)
                offset = cell_len(piece)
        elif offset and start:
            breaks.append(start)
            offset = cell_len(unit)
            previous, line = line, [start]
        else:
            offset = cell_len(unit)
            line.append(start)
        position = end
    # One character alone on the last line: the unit before it comes down with it (unless it
    # is all the line before holds).
    above = breaks[-2] if len(breaks) > 1 else 0
    if breaks and len(line) == 1 and previous and previous[-1] > above and _ORPHAN.fullmatch(text, breaks[-1]):
        moved = previous[-1]
        if cell_len(text[moved:].rstrip()) <= width:
            breaks[-1] = moved
    return breaks


def install() -> None:
    """Use `divide_line` for every Rich Text wrapped from now on (the app adds Textual's
    Content: tutor/ui/cjk.py)."""
    rich.text.divide_line = divide_line  # type: ignore[attr-defined]
