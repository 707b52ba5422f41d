"""A verdict's status: one enum with its words, styles and headlines (DMOJ's `result.py` is the
model). Plain Python: the runner, the CLI, watch and the app all read statuses from here.

`Status` is a `StrEnum`, so a status read back from the wire or the progress database (a plain
`"passed"`) compares equal to its member, and JSON writes the bare word.
"""

from __future__ import annotations

from enum import StrEnum

from tutor.i18n import N_, _


class Status(StrEnum):
    PASSED = "passed"  # the only status that counts as done
    FAILED = "failed"  # the check ran and found a difference
    ERROR = "error"  # the learner's code raised, or exited before the check finished
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # killed by a signal (segfault in an extension, abort, out of memory)
    SKIPPED = "skipped"  # this machine lacks what the exercise needs (CUDA, GPUs)
    CANCELLED = "cancelled"

    @property
    def word(self) -> str:
        """The status as a word in the current language (`failed` -> 未通过)."""
        return _(_WORDS[self])

    @property
    def style(self) -> str:
        """Its Rich style in tables and the results panel."""
        return _STYLES[self]

    def headline(self, ran: bool = False) -> str:
        """The results panel's banner (`✔ PASS`); `ran`: a passage's program, which is run, not
        checked (it ran to the end, or it did not)."""
        return _((_RAN if ran else _HEADLINES).get(self) or _HEADLINES[self])

    @property
    def says_nothing(self) -> bool:
        """Skipped and cancelled runs say nothing about the learner's code: never stored."""
        return self in (Status.SKIPPED, Status.CANCELLED)

    @property
    def bad(self) -> bool:
        """The code ran and was wrong (a failure to repeat with its seed)."""
        return self in (Status.FAILED, Status.ERROR, Status.CRASHED, Status.TIMEOUT)


def status_of(value: str) -> Status | None:
    """The member for a stored or received status word, or None for an unknown one."""
    try:
        return Status(value)
    except ValueError:
        return None


def status_word(status: str) -> str:
    """Any status string as a word in the current language (an unknown one as it is)."""
    member = status_of(status)
    return member.word if member is not None else status


def status_style(status: str) -> str:
    member = status_of(status)
    return member.style if member is not None else ""


_WORDS = {
    Status.PASSED: N_("passed"),
    Status.FAILED: N_("failed"),
    Status.ERROR: N_("error"),
    Status.TIMEOUT: N_("timed out"),
    Status.CRASHED: N_("crashed"),
    Status.SKIPPED: N_("skipped"),
    Status.CANCELLED: N_("cancelled"),
}
_STYLES = {
    Status.PASSED: "green",
    Status.FAILED: "red",
    Status.ERROR: "red",
    Status.TIMEOUT: "yellow",
    Status.CRASHED: "red",
    Status.SKIPPED: "dim",
    Status.CANCELLED: "dim",
}
_HEADLINES = {
    Status.PASSED: N_("✔ PASS"),
    Status.FAILED: N_("✘ FAIL"),
    Status.ERROR: N_("✘ ERROR"),
    Status.TIMEOUT: N_("⏱ TIMEOUT"),
    Status.CRASHED: N_("✘ CRASHED"),
    Status.SKIPPED: N_("⊘ SKIPPED"),
    Status.CANCELLED: N_("⊘ CANCELLED"),
}
_RAN = {Status.PASSED: N_("✔ RAN"), Status.FAILED: N_("✘ STOPPED WITH AN ERROR")}
