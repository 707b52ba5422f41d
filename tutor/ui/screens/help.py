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

from tutor.typing_engine import HELP as TYPEALONG_HELP
from tutor.ui.status import LEGEND

NOTES = [
    "Tab: inserts indentation when the cursor is in the leading whitespace of a line (or several "
    "lines are selected); anywhere else it reveals the next hint. After the last hint it offers "
    "the reference solution.",
    "Shift+Tab: removes one level of indentation. Enter keeps the indentation (one more after ':').",
    "A hint's code suggestion shows as dim ghost text on empty lines: → accepts it.",
    "Your code is saved automatically (half a second after you stop typing), and before every "
    "check, step change and quit. Reset keeps a backup in the tutor home's backups/ folder.",
    "Ctrl+P opens the command palette: every action above can be searched there.",
]


_NAMES = {"ctrl": "Ctrl", "alt": "Alt", "shift": "Shift", "tab": "Tab", "escape": "Esc",
          "left": "←", "right": "→", "enter": "Enter"}


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
            table.add_row(key_label(b), b.tooltip or b.description)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,q", "dismiss(None)", "Close", id="help-close")]

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__(classes="dialog-screen")
        self.bindings_list = bindings

    def compose(self) -> ComposeResult:
        legend = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        for sym, meaning in LEGEND:
            legend.add_row(sym, meaning)
        body = Group(
            bindings_table(self.bindings_list), Text(""),
            *[Text("• " + n) for n in NOTES], Text(""),
            Text("Type-along", style="bold"), *[Text("• " + n) for n in TYPEALONG_HELP], Text(""),
            Text("Step icons", style="bold"), legend,
        )
        with Vertical(classes="dialog", id="help-dialog"):
            yield Static("Keys  (Esc or F1 closes)", classes="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(body, id="help-body")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()  # arrows and PgUp/PgDn scroll
