"""Helpers for the chapter tests, which run reference solutions and realistic learner mistakes
(mutants: a solution with a few lines changed) through the real runner:

    def test_sigmoid_wrong_derivative(mutant):
        assert_fails(mutant("sigmoid", "grad_out * s * (1 - s)", "grad_out * s"),
                     "gradient of x", "max abs error")

The fixtures come from here (and `check_code`, `solution_text` from tests/conftest.py); import
the plain helpers with `from .conftest import assert_fails, assert_passes, mutate`.
"""

from __future__ import annotations

from typing import Callable

import pytest

from tutor.runner.protocol import Verdict

Edit = tuple[str, str]


def mutate(source: str, *edits: Edit) -> str:
    """`source` with each (old, new) edit applied in turn. Every `old` must be there: when the
    solution changes under a test, the test fails here instead of checking an unbroken solution."""
    for old, new in edits:
        assert old in source, f"mutation target not found: {old!r}"
        source = source.replace(old, new)
    return source


def describe(v: Verdict) -> str:
    """A verdict as a test-failure message: status, reason, details and the end of the output."""
    lines = [f"status: {v.status} (seed {v.seed})", f"reason: {v.reason}"]
    lines += [f"    {d}" for d in v.details]
    if v.output.strip():
        lines += ["output (the last 2000 characters):", v.output[-2000:]]
    return "\n".join(lines)


def assert_passes(v: Verdict) -> Verdict:
    """The check passed; returns the verdict (for its figures)."""
    assert v.status == "passed", describe(v)
    return v


def assert_fails(v: Verdict, *words: str, ignore_case: bool = False) -> str:
    """The check failed (an expectation, not an error in the code) with a reason that contains
    every one of `words` (in any case, with `ignore_case`); returns the reason."""
    assert v.status == "failed", describe(v)
    fold = str.lower if ignore_case else str
    missing = [w for w in words if fold(w) not in fold(v.reason)]
    assert not missing, f"the reason does not contain {missing}\n{describe(v)}"
    return v.reason


@pytest.fixture
def mutant(check_code, solution_text) -> Callable[..., Verdict]:
    """mutant(exercise_id, old, new) -> the verdict on the exercise's reference solution with
    `old` replaced by `new`; mutant(exercise_id, (old, new), (old2, new2), ...) applies several
    edits in turn."""

    def run(exercise_id: str, *edits) -> Verdict:
        if edits and isinstance(edits[0], str):
            assert len(edits) == 2, "mutant(exercise_id, old, new) or mutant(exercise_id, (old, new), ...)"
            edits = (tuple(edits),)
        return check_code(exercise_id, mutate(solution_text(exercise_id), *edits))

    return run


@pytest.fixture
def solution_verdict(check_code, solution_text) -> Callable[[str], Verdict]:
    """solution_verdict(exercise_id) -> the verdict on the exercise's unchanged reference solution."""
    return lambda exercise_id: check_code(exercise_id, solution_text(exercise_id))
