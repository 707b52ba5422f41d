"""Where to break a line of code that is wider than its pane, never inside a token.

A row ends after a space, after `,` `(` `[` `{` or an operator, or before `.`: the places Python itself tokenizes apart, so `torch.autograd.gradcheck(fn, x)` may
become `torch.autograd` / `.gradcheck(fn,` / `x)`, never `gradch` / `eck`. Inside a string
literal only a space is a place to break, and only when no boundary outside strings fits;
a word longer than the whole row is the one case cut at the width.

Used by the type-along passage (tutor/ui/widgets/typealong.py) and the guide's code blocks
(tutor/ui/widgets/guide_markdown.py). Pure functions of text: no Textual, no Rich console.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

_AFTER = set(",([{=+-*/%<>|&:;")  # a row may end just after one of these
_WORDS = re.compile(r"[ .,()\[\]{}=+\-*/%<>|&:;]")  # what lies between the places to break
_BEFORE = set(".")  # ...or just before one of these (a lone `))` row reads badly)


def _in_string(text: str) -> list[bool]:
    """Per character: inside a '...' or "..." literal (quotes included); a `#` outside
    strings starts a comment, which breaks like prose (after spaces)."""
    inside = [False] * len(text)
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            inside[i] = True
            if ch == "\\":
                if i + 1 < len(text):
                    inside[i + 1] = True
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "#":
            break
        elif ch in "'\"":
            quote = ch
            inside[i] = True
        i += 1
    return inside


def _boundary(text: str, k: int, inside: list[bool]) -> int:
    """How good a row start offset `k` is: 2 a token boundary, 1 a space inside a string,
    0 none (it would cut a token)."""
    before, at = text[k - 1], text[k]
    if at == " ":
        return 0  # start the row after the spaces instead: every character stays shown
    if inside[k - 1] and inside[k]:
        return 1 if before == " " else 0
    if before == " ":
        return 2
    if before in _AFTER and not inside[k - 1]:
        return 2
    if at in _BEFORE and not inside[k]:
        return 2
    return 0


def break_points(text: str, width: int, hang: int = 0) -> list[int]:
    """Character offsets where each screen row of `text` starts (the first is 0), for rows of
    `width` cells; rows after the first are `hang` cells narrower. Never inside the line's
    indentation, never inside a token when a boundary fits (see the module's docstring)."""
    starts = [0]
    n = len(text)
    indent = n - len(text.lstrip(" "))
    inside = _in_string(text)
    start, room = 0, max(1, width)
    while True:
        used, end = 0, start
        while end < n and used + cell_len(text[end]) <= room:
            used += cell_len(text[end])
            end += 1
        if end >= n:
            return starts
        end = max(end, start + 1)  # a character wider than the row still takes one
        best, best_rank = end, 0
        for k in range(end, max(start, indent), -1):
            rank = _boundary(text, k, inside)
            if rank > best_rank:
                best, best_rank = k, rank
                if rank == 2:
                    break
        start = best
        starts.append(start)
        room = max(1, width - hang)


def hang_for(text: str, width: int) -> int:
    """How far a line's continuation rows are indented: under its code plus 4 cells, at most
    a third of the row, and less where the line's longest word would not fit beside it."""
    longest = max((cell_len(word) for word in _WORDS.split(text)), default=0)
    hang = min(len(text) - len(text.lstrip(" ")) + 4, max(0, width // 3))
    return max(0, min(hang, width - longest - 2))  # a word plus the `.` before and `(` after
