"""Phases the runner itself announces while a check starts (the checker announces the rest
with `ctx.phase`, `ctx.build`, `ctx.time`, `ctx.memory`: see tutor/runner/checker_api.py).

Kept apart from the supervisor so that what a learner reads while processes start is in one
small place: the supervisor only calls `launching` before it starts a role's processes.
"""

from __future__ import annotations

from tutor.i18n import _
from tutor.runner.protocol import Event
from tutor.runner.subject import REFERENCE


def launching(role: str, processes: int, elapsed_s: float) -> Event:
    """`launching 2 processes for your code`: a distributed check starts its ranks (forked on
    the CPU, torchrun with CUDA); for the reference solution first, then for the learner's."""
    if role == REFERENCE:
        text = _("launching {n} processes for the reference solution", n=processes)
    else:
        text = _("launching {n} processes for your code", n=processes)
    return Event("phase", text, elapsed_s, {"launching": processes, "role": role})
