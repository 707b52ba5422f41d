"""Line breaking for Chinese text in Rich and Textual.

Rich (and Textual's Content, which borrows Rich's `divide_line`) breaks lines only at spaces.
Chinese has no spaces between words, so a sentence after inline code (`backward()` 则逆序…)
is one long "word": it jumps whole to the next line and leaves a short ragged line behind,
or is chopped mid-line with the rest of the paragraph out of step. Chinese text may break
between any two characters, except before closing punctuation (，。）…) and after opening
punctuation (（“《), the basic kinsoku rule. `divide_line` below does that and is installed
in place of Rich's; text without wide characters takes Rich's own path, unchanged.
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


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Rich's `divide_line` (the offsets where `text` breaks to fit `width` cells), with
    break opportunities between wide characters."""
    if not has_wide(text):
        return _rich_divide_line(text, width, fold)
    breaks: list[int] = []
    offset = 0  # cells used on the current line
    position = 0
    while position < len(text):
        match = _unit().match(text, position)
        if match is None or match.end() == position:  # cannot happen; never loop forever
            break
        start, end = match.span()
        unit = match.group(0)
        length = cell_len(unit.rstrip())
        if width - offset >= length:
            offset += cell_len(unit)
        elif length > width and fold:
            pieces = chop_cells(unit, width)
            for i, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                start += len(piece)
                offset = cell_len(piece) if i == len(pieces) - 1 else 0
        elif offset and start:
            breaks.append(start)
            offset = cell_len(unit)
        else:
            offset = cell_len(unit)
        position = end
    return breaks


def install() -> None:
    """Use `divide_line` for every Rich Text and Textual Content wrapped from now on."""
    rich.text.divide_line = divide_line  # type: ignore[attr-defined]
    try:
        import textual.content
    except ImportError:
        return
    textual.content.divide_line = divide_line  # type: ignore[attr-defined]
