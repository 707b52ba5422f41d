"""UI test helpers: key presses and widget text (the fakes are in tests/support/fakes.py)."""

from __future__ import annotations

import io
import time
from typing import Callable

from rich.console import Console
from textual.widgets import Static


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
