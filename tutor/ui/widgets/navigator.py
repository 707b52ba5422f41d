"""The step navigator: every step of the chapter with a status icon; Enter/click opens one.

An entry is the marker, icon and number, then the title wrapped so that it stays indented
under itself; an exercise shows its id (what `tutor check ID` takes) below.

A ScrollView that draws its own lines rather than an OptionList: every entry is wrapped
(hence its height known) before the first layout, so the scroll bar is placed in that layout.
An OptionList measures its options while drawing them, which started a second layout and a
redraw: ~19 ms of the first paint of `tutor start`.
"""

from __future__ import annotations

import functools
import re

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.css.scalar import Unit
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tutor.course import Chapter, Exercise, Step
from tutor.i18n import N_
from tutor.ui.cjk import has_wide
from tutor.steps import Snapshot, icon, step_status

_COLOURS = {"passed": "green", "done": "green", "started": "yellow", "cuda": "magenta", "read": "dim"}


# A Latin word or one wide character, with the punctuation that sticks to it: the units a line breaks between.
_UNITS_PATTERN = r"\s+|[（《“]*(?:[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+)[，。：；！？、）》”]*"


@functools.cache
def _units() -> re.Pattern[str]:
    return re.compile(_UNITS_PATTERN)  # ~3 ms (wide character ranges): compiled on first use, not at import


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` terminal cells: breaks at spaces, and between any two
    Chinese characters (which take two cells each and need no space), never before closing
    punctuation. A word longer than the line is folded (cut at the edge), not left overflowing."""
    lines: list[str] = []
    line = ""
    # Without wide characters a unit is a word or a run of spaces (no 3 ms regex compile).
    units = _units().findall(text) if has_wide(text) else [u for u in re.split(r"(\s+)", text) if u]
    for unit in units:
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
        # The id whole where it fits, else broken after its hyphens (a narrow navigator cut
        # `func-per-sample-gra`): every character of what `tutor check ID` takes is shown.
        for line in wrap_cells(step.id.replace("-", "- "), room):
            text.append("\n" + indent + line.replace("- ", "-"), style="dim")
    return text


class StepNavigator(ScrollView, can_focus=True):
    """Borders, the title "Steps" and the highlight's colours come from tutor.tcss."""

    BINDINGS = [
        Binding("up", "move(-1)", N_("Previous entry"), id="nav-up", show=False),
        Binding("down", "move(1)", N_("Next entry"), id="nav-down", show=False),
        Binding("home", "move_to(0)", N_("First entry"), id="nav-first", show=False),
        Binding("end", "move_to(-1)", N_("Last entry"), id="nav-last", show=False),
        Binding("pageup", "page(-1)", N_("Entries a page up"), id="nav-page-up", show=False),
        Binding("pagedown", "page(1)", N_("Entries a page down"), id="nav-page-down", show=False),
        Binding("enter", "open", N_("Open the highlighted step"), id="nav-open", show=False),
    ]
    COMPONENT_CLASSES = {"step-navigator--highlight"}

    class StepChosen(Message):
        def __init__(self, step_id: str) -> None:
            super().__init__()
            self.step_id = step_id

    highlighted: reactive[int | None] = reactive(None, always_update=True)

    _shown: tuple[Chapter, str, Snapshot] | None = None
    _width = 0

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._ids: list[str] = []
        self._prompts: list[Text] = []
        self._rows: list[tuple[int, Text]] = []  # (entry, one line of its prompt) per row
        self._tops: list[int] = []  # each entry's first row

    # -- what tests and the screen read ------------------------------------------------------------

    @property
    def entry_count(self) -> int:
        return len(self._ids)

    def prompt(self, index: int) -> Text:
        """Entry `index` as shown (all its lines)."""
        return self._prompts[index]

    # -- content -----------------------------------------------------------------------------------

    def _text_width(self) -> int:
        """Cells for an entry's text: the widget's width (or its CSS width before the first
        layout) less the border, the scroll bar's gutter (kept: tutor.tcss) and a cell each side."""
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
        width = self._width = self._text_width()
        self._ids, self._prompts, self._rows, self._tops = [], [], [], []
        index = 0
        for i, step in enumerate(chapter.steps):
            prompt = step_prompt(i + 1, step, step_status(step, snap), step.id == current, width)
            self._ids.append(step.id)
            self._prompts.append(prompt)
            self._tops.append(len(self._rows))
            self._rows.extend((i, line) for line in prompt.split("\n"))
            if step.id == current:
                index = i
        self.virtual_size = Size(width + 2, len(self._rows))
        self.highlighted = index
        self.refresh()

    # -- drawing -------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = self.scroll_offset.y + y
        base = self.rich_style
        if row >= len(self._rows):
            return Strip.blank(width, base)
        entry, line = self._rows[row]
        style = base
        if entry == self.highlighted:
            style = base + self.get_component_rich_style("step-navigator--highlight", partial=True)
        segments = [Segment(" ", style)]
        segments += [
            Segment(text, style + seg_style if seg_style else style)
            for text, seg_style, _ in line.render(self.app.console)
        ]
        meta = Style.from_meta({"entry": entry})
        return Strip(segments).extend_cell_length(width, style).crop(0, width).apply_style(meta)

    def watch_highlighted(self, index: int | None) -> None:
        if index is not None and self._tops and self.is_mounted:
            top = self._tops[index]
            bottom = self._tops[index + 1] if index + 1 < len(self._tops) else len(self._rows)
            self.scroll_to_region(Region(0, top, 1, bottom - top), animate=False, force=True)
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()  # the highlight is brighter while focused

    def on_blur(self) -> None:
        self.refresh()

    # -- keys and mouse ------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if self._ids:
            current = self.highlighted if self.highlighted is not None else -step
            self.highlighted = max(0, min(len(self._ids) - 1, current + step))

    def action_move_to(self, index: int) -> None:
        if self._ids:
            self.highlighted = index % len(self._ids)

    def action_page(self, direction: int) -> None:
        if not self._ids:
            return
        current = self.highlighted or 0
        target_row = self._tops[current] + direction * max(1, self.scrollable_content_region.height - 1)
        target_row = max(0, min(len(self._rows) - 1, target_row))
        self.highlighted = self._rows[target_row][0]

    def action_open(self) -> None:
        if self.highlighted is not None and self._ids:
            self.post_message(self.StepChosen(self._ids[self.highlighted]))

    def on_click(self, event: events.Click) -> None:
        entry = event.style.meta.get("entry")
        if isinstance(entry, int):
            event.stop()
            self.highlighted = entry
            self.action_open()
