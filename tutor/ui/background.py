"""Slow work off the UI thread, for both apps: a runner's start, a check, a passage's run.

Daemon threads, not Textual thread workers, on purpose: those run in the event loop's executor,
which the app waits for on exit, so quitting during a 60 s C++ build or the runner's torch
import would hang until it finished. A daemon thread ends with the process; the runner's own
process is stopped by the app's close_resources. Results come back as messages (tutor/ui/
messages.py), each tagged with the generation of the run that made it.
"""

from __future__ import annotations

import threading
from typing import Callable


def background(fn: Callable[[], None], name: str) -> threading.Thread:
    """Run `fn` in a daemon thread."""
    thread = threading.Thread(target=fn, name=name, daemon=True)
    thread.start()
    return thread


class Generations:
    """One run at a time: each run gets a new number, and only the latest one's results count
    (a run that another replaced comes back stale and is ignored)."""

    def __init__(self) -> None:
        self.gen = 0  # the latest run
        self.running = False

    def begin(self) -> int:
        self.gen += 1
        self.running = True
        return self.gen

    def latest(self, gen: int) -> bool:
        return gen == self.gen

    def finish(self, gen: int) -> bool:
        """The run `gen` ended: True when it is the latest (its result is to be shown)."""
        if gen != self.gen:
            return False
        self.running = False
        return True
