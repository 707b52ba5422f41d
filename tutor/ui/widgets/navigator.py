"""The step navigator: every step of the chapter with a status icon; Enter/click opens one."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tutor.course import Chapter, Step
from tutor.ui.status import Snapshot, icon, step_status


_COLOURS = {"passed": "green", "done": "green", "started": "yellow", "cuda": "magenta", "read": "dim"}


def step_prompt(number: int, step: Step, status: str, current: bool) -> Text:
    marker = "▶" if current else " "
    text = Text.assemble(marker, " ", (icon(status), _COLOURS.get(status, "")), f" {number}. {step.title}")
    if current:
        text.stylize("bold")
    return text


class StepNavigator(OptionList):
    class StepChosen(Message):
        def __init__(self, step_id: str) -> None:
            super().__init__()
            self.step_id = step_id

    def show(self, chapter: Chapter, current: str, snap: Snapshot) -> None:
        """(Re)list the chapter's steps, marking `current` and highlighting it."""
        options = []
        index = 0
        for i, step in enumerate(chapter.steps):
            status = step_status(step, snap)
            options.append(Option(step_prompt(i + 1, step, status, step.id == current), id=step.id))
            if step.id == current:
                index = i
        self.set_options(options)
        self.highlighted = index

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id:
            self.post_message(self.StepChosen(event.option_id))
