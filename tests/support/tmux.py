"""The real `tutor` command in a tmux pane: keys in, screen text out."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def tutor_command() -> str:
    exe = Path(sys.executable).with_name("tutor")
    return str(exe) if exe.exists() else f"{sys.executable} -m tutor"


class Pane:
    def __init__(self, session: str, pause: float = 0.3) -> None:
        self.session = session
        self.pause = pause

    def send(self, *keys: str) -> None:
        # One key at a time with a pause, as a person types: an escape sequence (End) and the
        # next key delivered in the same read are not always split apart by the terminal parser.
        for key in keys:
            subprocess.run(["tmux", "send-keys", "-t", self.session, key], check=True)
            time.sleep(self.pause)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.session, "-l", text], check=True)

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.session], check=True, capture_output=True, text=True
        ).stdout

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if needle in text:
                return text
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never appeared; the screen was:\n{text}")
