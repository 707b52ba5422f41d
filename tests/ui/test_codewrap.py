"""Code wrapped to a narrow pane (tutor/ui/codewrap.py): nothing lost, no row too wide, no
token cut where a boundary fits; and the guide's code blocks drawn that way."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from tutor.course import load_course
from tutor.ui.codewrap import break_points, hang_for
from tutor.ui.widgets.guide_markdown import guide_markdown

IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def rows(text: str, width: int) -> list[str]:
    starts = break_points(text, width, hang_for(text, width))
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def test_a_dotted_call_breaks_between_tokens() -> None:
    assert rows("torch.autograd.gradcheck(fn, inputs)", 20) == ["torch.autograd", ".gradcheck(fn, ", "inputs)"]
    line = "        ctx.save_for_backward(x)  # tensors backward needs"
    got = rows(line, 22)
    assert "".join(got) == line
    assert any(r.startswith(".save_for_backward(") for r in got)  # the long name whole, on a row of its own


def test_strings_break_only_at_spaces_and_only_when_nothing_else_fits() -> None:
    got = rows('print("first derivatives ok:", gradcheck(Cube.apply, (x,)))', 22)
    assert got[0] == "print("
    assert all(not r.startswith(("derivatives", "ok")) or r[0] != " " for r in got)
    assert "".join(got) == 'print("first derivatives ok:", gradcheck(Cube.apply, (x,)))'
    assert rows("x" * 30, 12) == ["x" * 12, "x" * 12, "x" * 6]  # one word wider than the row: cut


def _code_lines() -> list[str]:
    course = load_course(lang="en")
    lines: list[str] = []
    for chapter in course.chapters[:4]:
        for step in chapter.steps:
            text = step.text()
            for block in re.findall(r"```(?:python)?\n(.*?)```", text, re.S):
                lines += [line for line in block.expandtabs(4).split("\n") if len(line) > 20]
    return lines


@pytest.mark.parametrize("width", [22, 30, 36])
def test_every_guide_code_line_of_the_first_chapters_wraps_without_cutting_a_name(width: int) -> None:
    lines = _code_lines()
    assert len(lines) > 50
    for line in lines:
        hang = hang_for(line, width)
        starts = break_points(line, width, hang)
        got = [line[a:b] for a, b in zip(starts, starts[1:] + [len(line)])]
        assert "".join(got) == line
        assert cell_len(got[0]) <= width and all(cell_len(r) <= width - hang for r in got[1:])
        for cut in starts[1:]:
            # a name (outside a string) is never split unless it is wider than a row (on the
            # first row: than what the line's indentation leaves)
            indent = len(line) - len(line.lstrip(" "))
            for m in IDENT.finditer(line):
                size = m.end() - m.start()
                room = width - hang if m.start() >= starts[1] else width - indent
                if m.start() < cut < m.end() and size + 2 <= room:
                    before = line[:cut]
                    in_string = before.count('"') % 2 or before.count("'") % 2 or "#" in before
                    assert in_string, (line, width, got)


def test_guide_code_blocks_wrap_under_a_marker_and_highlighting_is_kept() -> None:
    code = "class Cube(torch.autograd.Function):\n    def forward(ctx, x):\n        return x ** 3\n"
    for highlight in (False, True):
        console = Console(width=24, color_system=None, force_terminal=False)
        with console.capture() as cap:
            console.print(guide_markdown(f"Text.\n\n```python\n{code}```\n", highlight))
        shown = cap.get().splitlines()
        assert all(cell_len(r) <= 24 for r in shown)
        assert " class Cube(torch       " in shown
        assert "   ↪ .autograd          " in shown and "   ↪ .Function):        " in shown
        assert "         return x ** 3  " in shown
