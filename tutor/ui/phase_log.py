"""What a check is doing while it runs, phase by phase, each with its own clock.

The runner sends phases as they begin (`launching 2 processes for your code`, `importing your
code`, `compiling ...`, `timing ...`, `training step 1/2`); the results panel shows the one in
progress with the seconds spent in it, and the phases already over with how long each took,
so a learner waiting 20 s can tell a slow compile from a stuck launch. Counted phases
(`trial 2/5` after `trial 1/5`) are one phase whose counter moves on. Plain Python: no Textual.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_COUNTER = re.compile(r"\s*\d+\s*/\s*\d+\s*$")
SHOWN_DONE = 4  # the phases over that the panel lists (the latest ones)
BRIEF_S = 0.1  # phases over quicker than this are not listed


def _key(text: str) -> str:
    return _COUNTER.sub("", text)


@dataclass
class PhaseLog:
    text: str  # the phase in progress (a message id or the runner's text)
    started: float  # when it began (time.monotonic)
    began: float = 0.0  # when the run began
    done: list[tuple[str, float]] = field(default_factory=list)  # (phase, seconds) over

    def __post_init__(self) -> None:
        self.began = self.began or self.started

    def enter(self, text: str, now: float) -> None:
        """A phase began (the same phase with its counter moved on keeps its clock)."""
        if _key(text) == _key(self.text):
            self.text = text
            return
        self.done.append((self.text, now - self.started))
        self.text, self.started = text, now

    def current(self, now: float) -> tuple[str, float, float]:
        """(phase in progress, seconds in it, seconds since the run began)."""
        return self.text, now - self.started, now - self.began

    def listed(self) -> list[tuple[str, float]]:
        """The latest phases over that took long enough to mention."""
        return [(t, s) for t, s in self.done if s >= BRIEF_S][-SHOWN_DONE:]
