"""A yes/no question in a modal dialog: reset, reveal the solution, reload from disk."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tutor.i18n import N_, _


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", N_("Yes"), id="confirm-yes"),
        Binding("n,escape", "answer(False)", N_("No"), id="confirm-no"),
    ]

    def __init__(self, question: str, yes: str = "", no: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.question = question
        self.yes = yes or _("Yes")
        self.no = no or _("No")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="dialog-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", variant="primary", id="yes")
                yield Button(f"{self.no} (n)", id="no")

    def on_mount(self) -> None:
        # The safe answer is the default. (Absent when the app is closing as this opens.)
        for button in self.query("#no").results(Button):
            button.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
