"""Stand-ins for the runner and the clock."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from tutor.course import Exercise
from tutor.runner.client import MachineInfo
from tutor.runner.protocol import CANCELLED, Event, Verdict


class FakeRunner:
    """Stands in for tutor.runner.client.Runner: canned verdicts, no torch process.

    The verdicts come in turn from `verdicts` (the last one repeats), or from `verdict_for(text)`
    of the file checked. `block_first` makes the first check wait until it is cancelled, like a
    slow check interrupted by another one; `block_all` makes every check wait, cancelled or not
    (a runner stuck in its start). One check at a time, as the real runner."""

    def __init__(
        self,
        verdicts: list[Verdict] | None = None,
        events: list[Event] | None = None,
        block_first: bool = False,
        verdict_for: Callable[[str], Verdict] | None = None,
        block_all: bool = False,
    ) -> None:
        self.verdicts = list(verdicts or [Verdict(status="passed")])
        self.events = events if events is not None else [Event("phase", "checking trial 1/4", 0.1)]
        self.block_first = block_first
        self.block_all = block_all
        self.verdict_for = verdict_for
        self.calls: list[tuple[str, str]] = []  # (exercise id, the text checked)
        self.cancelled = threading.Event()
        self.started = threading.Event()  # a check has begun
        self.cancels = 0
        self.lock = threading.Lock()

    @property
    def texts(self) -> list[str]:
        return [text for _id, text in self.calls]

    def start(self) -> MachineInfo:
        return MachineInfo("fake", 0, 0.0)

    def check(self, exercise: Exercise, code: Path, on_event: Any = None, seed: Any = None) -> Verdict:
        with self.lock:
            text = Path(code).read_text()
            self.calls.append((exercise.id, text))
            self.started.set()
            for e in self.events:
                if on_event:
                    on_event(e)
            if self.block_all:
                threading.Event().wait()  # never ends: only a daemon thread lets the process exit
            if self.block_first and len(self.calls) == 1:
                self.cancelled.wait(10)
                return Verdict(status=CANCELLED)
            if self.verdict_for is not None:
                return self.verdict_for(text)
            return self.verdicts.pop(0) if len(self.verdicts) > 1 else self.verdicts[0]

    def run_script(self, path: Path, on_event: Any = None, timeout: float = 120) -> Verdict:
        self.calls.append(("script", Path(path).read_text()))
        return Verdict(status="passed", reason="the program ran to the end", output="hello from the passage\n")

    def cancel(self) -> bool:
        self.cancels += 1
        self.cancelled.set()
        return True

    def close(self) -> None:
        pass


class FakeClock:
    """A clock the test moves by hand (`clock.now += 0.5`)."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
