"""A step's status (read, new, started, passed, done, cuda), its icon, and the progress labels:
plain Python, read by the app, watch and the chapter picker."""

from __future__ import annotations

from dataclasses import dataclass

from tutor.status import Status
from tutor.course import Chapter, Course, Exercise, Needs, Passage, Step
from tutor.i18n import N_, _
from tutor.progress import ExerciseProgress

# One-cell characters only: wide emoji break column alignment in many terminals.
ICONS = {
    "read": "·",
    "new": "○",
    "started": "◐",
    "passed": "✔",
    "done": "✔",
    "cuda": "⚡",
}

LEGEND = [
    ("·", N_("reading")),
    ("○", N_("not started")),
    ("◐", N_("in progress")),
    ("✔", N_("passed / typed along")),
    ("⚡", N_("needs a CUDA GPU this machine lacks")),
]


@dataclass(frozen=True)
class Snapshot:
    """What the progress store says, read once per refresh (one query each)."""

    exercises: dict[str, ExerciseProgress]
    passages: set[str]
    gpus: int | None = None  # None until the runner has told us


def step_status(step: Step, snap: Snapshot) -> str:
    """One of read, new, started, passed, done, cuda."""
    if isinstance(step, Exercise):
        rec = snap.exercises.get(step.id)
        status = rec.status if rec else "new"
        if status == "passed":
            return "passed"
        if step.needs.device_here(snap.gpus or 0)[0] is None:  # GPUs unknown yet count as none
            return "cuda"
        return status if status in ("new", "started") else "new"
    if isinstance(step, Passage):
        return "done" if step.key in snap.passages else "new"
    return "read"


def needs_text(needs: Needs) -> str:
    """What an exercise needs to run (`Needs.describe`), in the current language."""
    if needs.device == "cuda":
        n = max(needs.gpus, 1)
        return _("needs a CUDA GPU") if n == 1 else _("needs {n} CUDA GPUs", n=n)
    if len(needs.world_sizes) > 1:
        *first, last = needs.world_sizes
        return _("runs {sizes} processes, then {last}", sizes=", ".join(map(str, first)), last=last)
    if needs.processes > 1:
        return _("runs {n} processes", n=needs.processes)
    return _("runs on CPU")


def icon(status: str) -> str:
    return ICONS.get(status, "?")


def chapter_label(course: Course, chapter: Chapter) -> str:
    """`Ch 3/12 · Custom C++ and CUDA operators` (the last chapter number is the course length)."""
    total = max([c.number for c in course.chapters] + [len(course.chapters)])
    return _("Ch {number}/{total}", number=chapter.number, total=total) + f" · {chapter.title}"


def passed_count(exercises: list[Exercise], snap: Snapshot) -> int:
    return sum(1 for e in exercises if (r := snap.exercises.get(e.id)) and r.status == Status.PASSED)


def overall_label(course: Course, snap: Snapshot) -> str:
    """The course total (the chapter picker's title)."""
    return _(
        "{passed}/{total} exercises passed in the course",
        passed=passed_count(course.exercises, snap),
        total=len(course.exercises),
    )


def chapter_progress_label(chapter: Chapter, snap: Snapshot) -> str:
    """The header's count: this chapter's exercises, not the course's."""
    n = len(chapter.exercises)
    if not n:
        return _("no exercises in this chapter")
    return _("{passed}/{total} exercises passed", passed=passed_count(chapter.exercises, snap), total=n)


def first_step_to_do(chapter: Chapter, snap: Snapshot) -> Step:
    """Where to open a chapter without a saved position: the start for a fresh chapter,
    else its first unfinished exercise or passage (read steps have no done state)."""
    statuses = [step_status(s, snap) for s in chapter.steps]
    if not any(st in ("started", "passed", "done") for st in statuses):
        return chapter.steps[0]
    for step, st in zip(chapter.steps, statuses):
        if st in ("new", "started"):
            return step
    return chapter.steps[0]
