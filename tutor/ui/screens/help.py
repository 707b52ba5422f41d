"""F1: every key binding, what Tab does where, and the status icons."""

from __future__ import annotations

from typing import Iterable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.i18n import N_, _
from tutor.typing_engine import HELP as TYPEALONG_HELP
from tutor.steps import LEGEND

NOTES = [
    N_(
        "Tab: on an empty line (where you are stuck) it reveals the next hint, and a hint's "
        "one-line code then shows dim on that line: Tab again inserts it (→ only moves the cursor). "
        "In a line's leading whitespace, or with several lines selected, Tab indents; elsewhere in "
        "code it gives the next hint. After the last hint it offers the reference solution."
    ),
    N_("Shift+Tab: removes one level of indentation. Enter keeps the indentation (one more after ':')."),
    N_(
        "Esc never leaves the editor: it closes the newest panel (hints or results). F7 brings the "
        "panels back; Alt+↑/↓ (or Ctrl+↑/↓) scrolls the open one. Typing always goes to the editor."
    ),
    N_(
        "Layout: F4 zooms the guide, then the work, to the full width; Alt+Shift+←/→ moves the "
        "split; F2 shows the list of steps. Your choice is remembered."
    ),
    N_(
        "Your code is saved automatically (half a second after you stop typing), and before every "
        "check, step change and quit; the cursor reopens where you left it. Reset keeps a backup in "
        "the tutor home's backups/ folder."
    ),
    N_("Ctrl+P opens the command palette: every action above can be searched there."),
]

# The editor's own keys (TextArea's, plus ours), for F1.
EDITOR_KEYS = [
    ("Ctrl+A", N_("select all")),
    ("Home / End", N_("line start / end")),
    ("Ctrl+← / Ctrl+→", N_("word left / right (add Shift to select)")),
    ("Shift+arrows", N_("select")),
    ("PgUp / PgDn", N_("page up / down")),
    ("Ctrl+Z / Ctrl+Y", N_("undo / redo")),
    ("Ctrl+X / Ctrl+C / Ctrl+V", N_("cut / copy / paste")),
    ("Ctrl+W / Ctrl+U / Ctrl+K", N_("delete word left / to line start / to line end")),
    ("Ctrl+D", N_("delete the character right of the cursor")),
    ("F3", N_("soft-wrap long lines on/off")),
    ("F6", N_("select the line")),
]


_NAMES = {
    "ctrl": "Ctrl",
    "alt": "Alt",
    "shift": "Shift",
    "tab": "Tab",
    "escape": "Esc",
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
    "enter": "Enter",
}


def key_label(binding: Binding) -> str:
    """`ctrl+r,f5` -> `Ctrl+R / F5`."""
    keys = []
    for key in binding.key.split(","):
        keys.append("+".join(_NAMES.get(p, p.upper()) for p in key.strip().split("+")))
    return " / ".join(keys)


def bindings_table(bindings: Iterable[Binding]) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for b in bindings:
        if b.description:
            table.add_row(key_label(b), _(b.tooltip or b.description))
    return table


def _bullets(notes: Iterable[str]) -> Table:
    """A bulleted list whose wrapped lines stay indented under their bullet."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for note in notes:
        grid.add_row("•", _(note))
    return grid


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,q", "dismiss(None)", N_("Close"), id="help-close")]

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__(classes="dialog-screen")
        self.bindings_list = bindings

    def compose(self) -> ComposeResult:
        legend = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        for sym, meaning in LEGEND:
            legend.add_row(sym, _(meaning))
        editor = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        editor.add_column(style="bold", no_wrap=True)
        editor.add_column()
        for keys, what in EDITOR_KEYS:
            editor.add_row(keys, _(what))
        # The icons first (short, and what a newcomer asks first), then keys, then the notes.
        body = Group(
            Text(_("Step icons"), style="bold"),
            legend,
            Text(""),
            bindings_table(self.bindings_list),
            Text(""),
            _bullets(NOTES),
            Text(""),
            Text(_("Type-along"), style="bold"),
            _bullets(TYPEALONG_HELP),
            Text(""),
            Text(_("Editor keys"), style="bold"),
            editor,
        )
        with Vertical(classes="dialog", id="help-dialog"):
            yield Static(_("Help  (↑/↓ and PgUp/PgDn scroll; Esc or F1 closes)"), classes="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(body, id="help-body")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()  # arrows and PgUp/PgDn scroll
