"""Every reference solution passes on every seed of its exercise's pool: the seeds a learner's
check draws from (tutor/seeds.py). A seed already checked for a mutant in this session is not
checked again (the warm runner keeps that reference run)."""

from __future__ import annotations

import pytest

from tutor.course import Exercise, load_course
from tutor.seeds import seed_pool

from .conftest import _warm, exercise_marks


def _cases() -> list[object]:
    cases: list[object] = []
    for exercise in load_course().exercises:
        marks = exercise_marks(exercise)
        for seed in seed_pool(exercise.id):
            cases.append(pytest.param(exercise, seed, id=f"{exercise.id}-{seed}", marks=marks))
    return cases


@pytest.mark.parametrize(("exercise", "seed"), _cases())
def test_the_solution_passes_on_every_seed_a_learner_can_draw(
    check_code, solution_text, exercise: Exercise, seed: int
) -> None:
    _warm(check_code, solution_text, exercise.id, seed)  # asserts the pass
