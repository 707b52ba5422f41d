"""The reference solution beside the learner's code, as a side-by-side line diff (difflib)."""

from __future__ import annotations

import difflib

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.i18n import N_, _

_STYLES = {"delete": "red", "insert": "green", "replace": "yellow", "equal": ""}


def side_by_side(mine: str, reference: str) -> Table:
    """Rows of (your line, reference line), changed lines coloured; equal lines plain."""
    a, b = mine.splitlines(), reference.splitlines()
    table = Table(expand=True, show_edge=False, pad_edge=False, box=None, padding=(0, 1))
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column(_("your code"), ratio=1, overflow="fold")
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column(_("reference solution"), ratio=1, overflow="fold")
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        style = _STYLES[tag]
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            left = Text(a[i], style=style) if i < i2 else Text("")
            right = Text(b[j], style=style) if j < j2 else Text("")
            table.add_row(str(i + 1) if i < i2 else "", left, str(j + 1) if j < j2 else "", right)
    return table


class SolutionScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss(None)", N_("Close"), id="solution-close")]

    def __init__(self, title: str, mine: str, reference: str) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.mine = mine
        self.reference = reference

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="solution-dialog"):
            yield Static(
                _(
                    "Reference solution: {title}  (red: only yours, green: only the "
                    "reference, yellow: changed; Esc closes)",
                    title=self.title_text,
                ),
                classes="dialog-title",
            )
            with VerticalScroll(id="solution-scroll"):
                yield Static(side_by_side(self.mine, self.reference), id="solution-diff")
