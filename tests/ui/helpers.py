"""Test helpers: a fake Runner (canned verdicts, no torch process) and widget text."""

from __future__ import annotations

import io
import threading
import time
from typing import Callable
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from tutor.course import Exercise
from tutor.runner.client import MachineInfo
from tutor.runner.protocol import CANCELLED, Event, Verdict


class FakeRunner:
    """Stands in for tutor.runner.client.Runner: canned verdicts, no torch process."""

    def __init__(
        self, verdicts: list[Verdict] | None = None, events: list[Event] | None = None, block_first: bool = False
    ) -> None:
        self.verdicts = list(verdicts or [Verdict(status="passed")])
        self.events = events or [Event("phase", "checking trial 1/4", 0.1)]
        self.block_first = block_first
        self.calls: list[tuple[str, str]] = []
        self.cancelled = threading.Event()
        self.cancels = 0

    def start(self) -> MachineInfo:
        return MachineInfo("fake", 0, 0.0)

    def check(self, exercise: Exercise, code: Path, on_event=None, seed=None) -> Verdict:
        self.calls.append((exercise.id, Path(code).read_text()))
        for e in self.events:
            if on_event:
                on_event(e)
        if self.block_first and len(self.calls) == 1:
            self.cancelled.wait(10)
            return Verdict(status=CANCELLED)
        return self.verdicts.pop(0) if len(self.verdicts) > 1 else self.verdicts[0]

    def run_script(self, path: Path, on_event=None, timeout: float = 120) -> Verdict:
        self.calls.append(("script", Path(path).read_text()))
        return Verdict(status="passed", reason="the program ran to the end", output="hello from the passage\n")

    def cancel(self) -> bool:
        self.cancels += 1
        self.cancelled.set()
        return True

    def close(self) -> None:
        pass


KEY_NAMES = {" ": "space", "\n": "enter", "\t": "tab"}


def keys_for(text: str) -> list[str]:
    """The key presses that type `text`."""
    return [KEY_NAMES.get(ch, ch) for ch in text]


def prompt_text(option: object) -> str:
    """An OptionList option's prompt as plain text."""
    return plain(option.prompt, 60)


def text_of(widget: Static, width: int = 200) -> str:
    """What a Static shows, as plain text (its content may be a Rich renderable)."""
    content = widget.content
    return content if isinstance(content, str) else plain(content, width)


def plain(renderable: object, width: int = 80) -> str:
    """A Rich renderable as plain text."""
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until `condition()` holds (timers and threads are slow on a busy CI)."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        await pilot.pause(0.05)
