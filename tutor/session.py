"""The learning rules, once: where the learner is, which exercise is current and which comes
next (and whether this machine can run it), hints, when the solution may be shown, and
recording a verdict. Modelled on rustlings' single `AppState` behind both its watch and list
modes: the app, `tutor watch` and every CLI command ask a `LearnerSession`.

Plain Python: no Textual, no torch. Every method runs on the caller's thread (the progress
store's connection belongs to the thread that opened it).
"""

from __future__ import annotations

from typing import Callable

from tutor.course import Chapter, Course, Exercise, Mistake, Step
from tutor.progress import Progress
from tutor.runner.protocol import Verdict
from tutor.status import Status
from tutor.steps import Snapshot, first_step_to_do


class LearnerSession:
    """One learner's course and progress. `progress` may be None (a store that cannot be
    opened): positions are then the course's start and nothing is recorded."""

    def __init__(self, course: Course, progress: Progress | None, device: str = "auto") -> None:
        self.course = course
        self.progress = progress
        self.device = device  # --device: what "can this machine run it" asks for
        self.gpus: int | None = None  # None until the runner has said how many it sees

    # -- what the store says ----------------------------------------------------------------------

    def status(self, exercise: Exercise) -> str:
        """new, started or passed."""
        return self.progress.exercise(exercise.id).status if self.progress is not None else "new"

    def passed(self, exercise: Exercise) -> bool:
        return self.status(exercise) == Status.PASSED

    def passed_ids(self) -> set[str]:
        if self.progress is None:
            return set()
        return {k for k, v in self.progress.all_exercises().items() if v.status == Status.PASSED}

    def snapshot(self) -> Snapshot:
        """What the store says, read once (one query each), for icons and counts."""
        if self.progress is None:
            return Snapshot({}, set(), self.gpus)
        return Snapshot(self.progress.all_exercises(), self.progress.passages_done(), self.gpus)

    # -- can this machine run it ------------------------------------------------------------------

    def runs_here(self, exercise: Exercise) -> tuple[bool, str]:
        """Whether this machine can check `exercise` (assumed yes until the runner reports)."""
        if self.gpus is None:
            return True, ""
        device, why = exercise.needs.device_here(self.gpus, self.device)
        return device is not None, why

    # -- where the learner is ---------------------------------------------------------------------

    def last_position(self) -> tuple[int, str | None] | None:
        return self.progress.last_position() if self.progress is not None else None

    def set_position(self, chapter: int, step_id: str | None) -> None:
        """Remember where the learner is, so `tutor start`, `check` and `watch` continue there.
        Raises ProgressError when it cannot be saved."""
        if self.progress is not None:
            self.progress.set_position(chapter, step_id)

    def go_to(self, exercise: Exercise) -> None:
        self.set_position(self.course.chapter_of(exercise).number, exercise.id)

    def start_position(self, chapter: int | None) -> tuple[int, str | None]:
        """Where `tutor start [chapter N]` opens: that chapter where the learner left it (None:
        its first unfinished step), else where the learner left off, else the first chapter."""
        if chapter is not None:
            return chapter, self.progress.chapter_position(chapter) if self.progress is not None else None
        last = self.last_position()
        if last and last[0] in {c.number for c in self.course.chapters}:
            return last
        return self.course.chapters[0].number, None

    def resolve(
        self, number: int, step_id: str | None, snapshot: Callable[[], Snapshot] | None = None
    ) -> tuple[Chapter, Step, bool]:
        """Chapter `number` (or the first) and its step `step_id`, else where the learner left
        that chapter, else its first unfinished step (by `snapshot()`, read only then); and
        whether the number was unknown."""
        unknown = False
        try:
            chapter = self.course.chapter(number)
        except KeyError:
            chapter, unknown = self.course.chapters[0], True
        step: Step | None = None
        if step_id is None and self.progress is not None:
            try:
                step_id = self.progress.chapter_position(chapter.number)
            except Exception:  # a read error must not block opening the chapter
                step_id = None
        if step_id is not None:
            step = next((s for s in chapter.steps if s.id == step_id), None)
        if step is None:
            step = first_step_to_do(chapter, (snapshot or self.snapshot)())
        return chapter, step, unknown

    def current_exercise(self) -> Exercise:
        """The exercise the learner is on: the current step if it is one, else the chapter's
        first unfinished exercise, else the course's (the course's first without a store)."""
        if self.progress is None:
            return self.course.exercises[0]
        last = self.progress.last_position()
        passed = self.passed_ids()
        chapters = list(self.course.chapters)
        if last:
            try:
                chapter = self.course.chapter(last[0])
                if last[1]:
                    step = chapter.step(last[1])
                    if isinstance(step, Exercise):
                        return step
                chapters = [chapter] + [c for c in chapters if c is not chapter]
            except KeyError:
                pass
        for c in chapters:
            for e in c.exercises:
                if e.id not in passed:
                    return e
        return self.course.exercises[0]

    def chapter_exercise(self, chapter: Chapter) -> Exercise | None:
        """A chapter's first exercise not passed yet, else its first; None without exercises."""
        passed = self.passed_ids()
        return next((e for e in chapter.exercises if e.id not in passed), None) or next(iter(chapter.exercises), None)

    def neighbour(self, step: Step, delta: int) -> Step | None:
        """The next/previous step, crossing into the neighbouring chapter at the ends."""
        chapter = self.course.chapter_of(step)
        steps = chapter.steps
        i = steps.index(step) + delta
        if 0 <= i < len(steps):
            return steps[i]
        chapters = self.course.chapters
        j = chapters.index(chapter) + delta
        if not 0 <= j < len(chapters):
            return None
        return chapters[j].steps[0] if delta > 0 else chapters[j].steps[-1]

    def next_exercise(self, exercise: Exercise, delta: int) -> Exercise | None:
        """The exercise `delta` places away in course order (watch's n and p)."""
        exercises = self.course.exercises
        i = exercises.index(exercise) + delta
        return exercises[i] if 0 <= i < len(exercises) else None

    def after_pass(self, exercise: Exercise) -> Exercise | None:
        """Where to go after `exercise` passed: the next exercise in course order that has not
        passed and can run here, wrapping around to earlier ones; None when none is left."""
        exercises = self.course.exercises
        i = exercises.index(exercise)
        passed = self.passed_ids()
        for ex in exercises[i + 1 :] + exercises[:i]:
            if ex.id not in passed and self.runs_here(ex)[0]:
                return ex
        return None

    def step_after_pass(self, exercise: Exercise) -> Step | None:
        """The app's next step after `exercise` passed: the following step, passing over the
        exercises this machine cannot run (as watch's `after_pass` does)."""
        step: Step | None = self.neighbour(exercise, +1)
        while isinstance(step, Exercise) and not self.runs_here(step)[0]:
            step = self.neighbour(step, +1)
        return step

    # -- hints and the solution -------------------------------------------------------------------

    def hints_used(self, exercise: Exercise) -> int:
        if self.progress is None:
            return 0
        return min(self.progress.exercise(exercise.id).hints_used, len(exercise.hints))

    def use_hint(self, exercise: Exercise) -> int:
        """Reveal the next hint (it counts as used, everywhere); how many are revealed now.
        Raises ProgressError when it cannot be recorded."""
        if self.progress is None:
            return min(len(exercise.hints), 1)
        return self.progress.use_hint(exercise.id, len(exercise.hints))

    def hints_left(self, exercise: Exercise) -> int:
        return len(exercise.hints) - self.hints_used(exercise)

    def solution_hints_left(self, exercise: Exercise) -> int:
        """How many hints must still be revealed before the reference solution is shown:
        0 once the exercise passed (compare freely) or every hint was seen."""
        return 0 if self.passed(exercise) else max(0, self.hints_left(exercise))

    def last_mistake(
        self, exercise: Exercise, english: Callable[[], Exercise] | None = None
    ) -> tuple[Mistake, float] | None:
        """The known mistake (and when) of the learner's last check of `exercise`, when it
        failed with a reason a [[steps.mistakes]] entry recognises: what the app's Tab offers
        first (Exercise.mistake_for). A reason stored in English while the course is in another
        language is matched by the words of `english()` (the exercise in English, loaded only
        then), the mistakes being the same list in order."""
        if self.progress is None:
            return None
        run = next((r for r in self.progress.runs(exercise.id, limit=20) if r.role == "learner"), None)
        if run is None or run.status in (Status.PASSED, Status.SKIPPED, Status.CANCELLED):
            return None
        mistake = exercise.mistake_for(run.reason)
        if mistake is None and english is not None:
            original = english()
            found = original.mistake_for(run.reason)
            if found is not None and len(original.mistakes) == len(exercise.mistakes):
                mistake = exercise.mistakes[original.mistakes.index(found)]
        return (mistake, run.at) if mistake else None

    # -- verdicts ---------------------------------------------------------------------------------

    def record(self, exercise: Exercise, verdict: Verdict, role: str = "learner") -> bool:
        """Store a finished check in the run history (a learner's pass marks the exercise
        passed). Cancelled and skipped runs say nothing about the code: not stored. Raises
        ProgressError when it cannot be stored."""
        if self.progress is None or verdict.status in (Status.CANCELLED, Status.SKIPPED):
            return False
        self.progress.record_run(exercise.id, verdict.status, verdict.reason, verdict.figures, role=role)
        return True
