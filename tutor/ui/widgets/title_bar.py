"""The main screen's title bar: the chapter and its progress, or for a few seconds a notice in
their place (a toast in the corner covered the results, the diff or the newest hint). One
Static, not Textual's Header (three widgets and a clock slot): a lighter first paint."""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static


class TitleBar(Static):
    def __init__(self, *, id: str | None = None, ended: Callable[[], object] | None = None) -> None:
        super().__init__(id=id)
        self._header = ""  # what the bar says when no notice stands in it
        self._timer: Timer | None = None
        self._ended = ended  # a notice ended (the bar may be a row shorter now)

    @property
    def header(self) -> str:
        return self._header

    @header.setter
    def header(self, text: str) -> None:
        self._header = text
        if self._timer is None:
            self.update(Text(text), layout=False)  # one row whatever it says: no layout pass

    def show_notice(self, message: str, severity: str, timeout: float) -> None:
        """`message` for `timeout` seconds; a notice longer than the row wraps onto a second."""
        for level in ("information", "warning", "error"):
            self.set_class(level == severity, f"-notice-{level}")
        self.add_class("-notice")
        self.update(Text(message.replace("\n", " ")))
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(max(1.0, timeout), self._end_notice)

    def _end_notice(self) -> None:
        self._timer = None
        self.remove_class("-notice", "-notice-information", "-notice-warning", "-notice-error")
        self.update(Text(self._header))
        if self._ended is not None:
            self._ended()
