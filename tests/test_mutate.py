"""`tutor dev mutate`: operator mutants of a solution, the chapter record and its staleness."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tutor import mutate
from tutor.course import load_course

SOURCE = "def f(x, n):\n    if x > 0:\n        return x * 2 + n\n    return -x\n"


def test_mutants_are_single_operator_changes_that_compile():
    ms = list(mutate.mutants(SOURCE))
    afters = {m.after for m in ms}
    assert "return x / 2 + n" in afters and "return x * 2 - n" in afters
    assert "if x >= 0:" in afters or "if x < 0:" in afters
    assert "return x * 3 + n" in afters or "return x * 1 + n" in afters  # a nudged number
    assert not any("&" in a or "<<" in a for a in afters), "bitwise swaps of arithmetic are noise"
    assert len({m.id for m in ms}) == len(ms) and len({m.source for m in ms}) == len(ms)
    for m in ms:
        compile(m.source, "<m>", "exec")
        assert m.source != SOURCE


def test_the_record_round_trips_and_goes_stale_when_the_solution_changes(tmp_path: Path):
    course = load_course()
    sigmoid = course.exercise("sigmoid")
    solution = tmp_path / "sigmoid.py"
    solution.write_text(sigmoid.solution.read_text(encoding="utf-8"), encoding="utf-8")
    exercise = dataclasses.replace(sigmoid, solution=solution)
    m = mutate.Mutant("core/RemoveDecorator:0", 7, "@staticmethod", "def forward(ctx, x):", "")
    score = mutate.Score(
        "sigmoid",
        outcomes=[mutate.Outcome(m, "passed", ""), mutate.Outcome(m, "failed", "x")],
        equivalent={"core/RemoveDecorator:0": "apply calls forward through the class"},
    )
    mutate.write_record(tmp_path, {"sigmoid": mutate.entry_for(exercise, score)})
    entry = mutate.read_record(tmp_path)["sigmoid"]
    assert entry["survivors"][0]["why"] == "apply calls forward through the class"
    status = mutate.entry_status(exercise, entry)
    assert status.measured and not status.stale
    assert (status.mutants, status.killed, status.equivalent, status.unexplained) == (2, 1, 1, 0)
    assert status.ratio == 1.0
    solution.write_text(solution.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert mutate.entry_status(exercise, entry).stale
    assert not mutate.entry_status(exercise, None).measured


def test_the_record_goes_stale_when_a_checker_helper_changes(tmp_path: Path):
    """A chapter's `checks/_*.py` judge as much as the checker itself does."""
    import shutil

    sigmoid = load_course().exercise("sigmoid")
    checks = tmp_path / "checks"
    shutil.copytree(sigmoid.checker.parent, checks)
    exercise = dataclasses.replace(sigmoid, checker=checks / sigmoid.checker.name)
    entry = mutate.entry_for(exercise, mutate.Score("sigmoid", outcomes=[], equivalent={}))
    assert not mutate.entry_status(exercise, entry).stale
    helper = next(checks.glob("_*.py"))
    helper.write_text(helper.read_text(encoding="utf-8") + "\n# a changed tolerance\n", encoding="utf-8")
    assert mutate.entry_status(exercise, entry).stale
    assert "helpers_sha" in entry


@pytest.mark.slow
def test_mutating_a_small_exercise_through_the_real_checker(runner):
    exercise = load_course().exercise("sigmoid")

    def check(e, path, seed):
        v = runner.check(e, path, seed=seed)
        return v.status, v.reason

    score = mutate.measure(exercise, check, limit=8)
    assert len(score.outcomes) == 8
    killed = [o for o in score.outcomes if o.killed]
    # Every arithmetic change of the derivative is caught; removing @staticmethod is not (the
    # Function machinery calls forward and backward through the class either way).
    assert all(o.killed for o in score.outcomes if "Binary" in o.mutant.id or "Number" in o.mutant.id)
    assert killed and all(o.reason for o in killed)
    assert {o.mutant.id for o in score.survivors} <= {"core/RemoveDecorator:0", "core/RemoveDecorator:1"}
