"""Every known mistake in a chapter's manifest (`[[steps.mistakes]]` in lesson.toml) is the one
home of its mutant: here each one is written into the reference solution and run through the
real checker, which must reject it on the pool's seeds with a reason that contains the mistake's
words, so the learner who makes it is offered its targeted hint.

The chapter test files hold the mutants that have no hint of their own (and the variants).
"""

from __future__ import annotations

import pytest

from tutor.course import Course, Exercise, load_course

from .conftest import describe, exercise_marks

COURSE: Course = load_course()


def _cases() -> list[object]:
    cases: list[object] = []
    for exercise in COURSE.exercises:
        marks = exercise_marks(exercise)
        for j, mistake in enumerate(exercise.mistakes):
            cases.append(pytest.param(exercise, j, id=f"{exercise.id}[{j}]-{mistake.when[:40]}", marks=marks))
    return cases


@pytest.mark.parametrize(("exercise", "j"), _cases())
def test_a_known_mistake_fails_with_its_words(mutant, exercise: Exercise, j: int) -> None:
    mistake = exercise.mistakes[j]
    v = mutant(exercise.id, *mistake.mutant)
    assert v.status == "failed", describe(v)
    assert mistake.matches(v.reason), (
        f"the reason does not contain the mistake's words {mistake.when!r}, so its hint is never offered\n"
        + describe(v)
    )
