"""The chapter picker: every chapter with its passed count; Enter opens one."""

from __future__ import annotations

import time

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.course import Course
from tutor.i18n import N_, _
from tutor.steps import Snapshot, overall_label, passed_count


TYPE_AHEAD_S = 1.0  # digits typed within this of each other make one chapter number


class ChapterPicker(ModalScreen[int | None]):
    """Dismisses with the chosen chapter number, or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", N_("Close"), id="chapters-close")]

    def __init__(self, course: Course, current: int, snap: Snapshot) -> None:
        super().__init__(classes="dialog-screen")
        self.course = course
        self.current = current
        self.snap = snap
        self._typed, self._typed_at = "", 0.0  # digits typed so far (a chapter number)

    def compose(self) -> ComposeResult:
        options = []
        highlighted = 0
        for i, ch in enumerate(self.course.chapters):
            done = passed_count(ch.exercises, self.snap)
            total = len(ch.exercises)
            mark = "▶" if ch.number == self.current else " "
            # Number, title and count in columns: a title that wraps stays indented under
            # itself, and the count (已通过 0/5) stays whole at the right, not at the left edge.
            entry = Table.grid(expand=True)
            entry.add_column(width=6, no_wrap=True)
            entry.add_column(ratio=1)
            entry.add_column(no_wrap=True, justify="right")
            entry.add_row(
                f"{mark} {ch.number:2d}  ",
                Text(ch.title, style="bold"),
                Text(
                    "  " + _("{done}/{total} passed", done=done, total=total),
                    style="green" if total and done == total else "dim",
                ),
            )
            if ch.summary:  # under the title, its wrapped lines too
                entry.add_row("", Text(ch.summary, style="dim"), "")
            options.append(Option(entry, id=str(ch.number)))
            if ch.number == self.current:
                highlighted = i
        with Vertical(classes="dialog", id="chapters-dialog"):
            yield Static(
                _("Jump to a chapter  (type its number or use ↑↓; Enter opens, Esc closes)")
                + " · "
                + overall_label(self.course, self.snap),
                classes="dialog-title",
            )
            yield OptionList(*options, id="chapter-list")
        self._highlighted = highlighted

    def on_mount(self) -> None:
        chooser = self.query_one("#chapter-list", OptionList)
        chooser.highlighted = self._highlighted
        chooser.focus()

    def on_key(self, event: events.Key) -> None:
        """Digits go to that chapter: `1` then `2` within a second highlights chapter 12
        (Enter opens it); a number no chapter has starts over from its last digit."""
        if not (event.character and event.character.isdigit()):
            return
        event.stop()
        now = time.monotonic()
        typed = self._typed + event.character if now - self._typed_at < TYPE_AHEAD_S else event.character
        numbers = [ch.number for ch in self.course.chapters]
        if int(typed) not in numbers:
            typed = event.character
        self._typed, self._typed_at = typed, now
        if int(typed) in numbers:
            self.query_one("#chapter-list", OptionList).highlighted = numbers.index(int(typed))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option_id) if event.option_id else None)
