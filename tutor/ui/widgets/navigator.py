"""The step navigator: every step of the chapter with a status icon; Enter/click opens one.

Each entry is a two-column grid (marker, icon and number | title), so a title that wraps
stays indented under itself; an exercise shows its id (what `tutor check ID` takes) below.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, chop_cells
from rich.text import Text
from textual.css.scalar import Unit
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tutor.course import Chapter, Exercise, Step
from tutor.ui.status import Snapshot, icon, step_status

_COLOURS = {"passed": "green", "done": "green", "started": "yellow", "cuda": "magenta", "read": "dim"}


# A Latin word or one wide character, with the punctuation that sticks to it: the units a line breaks between.
_UNITS = re.compile(
    r"\s+|[（《“]*(?:[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+)[，。：；！？、）》”]*"
)


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` terminal cells: breaks at spaces, and between any two
    Chinese characters (which take two cells each and need no space), never before closing
    punctuation. A word longer than the line is folded (cut at the edge), not left overflowing."""
    lines: list[str] = []
    line = ""
    for unit in _UNITS.findall(text):
        if unit.isspace():
            if line:
                line += " "
            continue
        if line and cell_len(line + unit) > width:
            lines.append(line.rstrip())
            line = ""
        while cell_len(line + unit) > width:  # a word longer than the line: fold it
            head = chop_cells(line + unit, width)[0]
            lines.append(head)
            unit = (line + unit)[len(head) :]
            line = ""
        line += unit
    if line.strip():
        lines.append(line.rstrip())
    return lines


def step_prompt(number: int, step: Step, status: str, current: bool, width: int = 24) -> Text:
    """`▶ ✔  3. Title` with the title wrapped to `width` cells, continuation lines indented
    under the title (plain Text: a grid per entry made the first paint ~40 ms slower)."""
    marker = "▶" if current else " "
    text = Text.assemble(marker, " ", (icon(status), _COLOURS.get(status, "")), f" {number:>2}. ")
    indent = " " * text.cell_len
    room = max(8, width - text.cell_len)
    lines = wrap_cells(step.title, room) or [""]
    text.append(lines[0], style="bold" if current else "")
    for line in lines[1:]:
        text.append("\n" + indent + line, style="bold" if current else "")
    if isinstance(step, Exercise):
        text.append("\n" + indent + step.id, style="dim")
    return text


class StepNavigator(OptionList):
    """Borders and the title "Steps" come from tutor.tcss."""

    class StepChosen(Message):
        def __init__(self, step_id: str) -> None:
            super().__init__()
            self.step_id = step_id

    _shown: tuple[Chapter, str, Snapshot] | None = None
    _width = 0

    def _text_width(self) -> int:
        """Cells for an entry: the widget's width (or its CSS width before the first layout)
        less the border and the scrollbar."""
        if self.size.width:
            return self.scrollable_content_region.width - 2
        width = self.styles.width
        return int(width.value) - 6 if width is not None and width.unit == Unit.CELLS else 26

    def on_resize(self) -> None:
        if self._shown is not None and self._text_width() != self._width:
            self.show(*self._shown)

    def show(self, chapter: Chapter, current: str, snap: Snapshot) -> None:
        """(Re)list the chapter's steps, marking `current` and highlighting it."""
        self._shown = (chapter, current, snap)
        width = self._text_width()
        self._width = width
        options = []
        index = 0
        for i, step in enumerate(chapter.steps):
            status = step_status(step, snap)
            options.append(Option(step_prompt(i + 1, step, status, step.id == current, width), id=step.id))
            if step.id == current:
                index = i
        self.set_options(options)
        self.highlighted = index

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id:
            self.post_message(self.StepChosen(event.option_id))
