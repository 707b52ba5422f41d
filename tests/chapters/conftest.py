"""Helpers for the chapter tests, which run reference solutions and realistic learner mistakes
(mutants: a solution with a few lines changed) through the real runner:

    def test_sigmoid_wrong_derivative(mutant):
        assert_fails(mutant("sigmoid", "grad_out * s * (1 - s)", "grad_out * s"),
                     "gradient of x", "max abs error")

The fixtures come from here (and `check_code`, `solution_text` from tests/conftest.py); import
the plain helpers with `from .conftest import assert_fails, assert_passes, mutate`.

Verdicts must not depend on luck: `mutant(...)` runs each wrong solution on seeds from the
exercise's pool and asserts every one is rejected; `variant(...)` does the same for a
correct-but-different solution, asserting every seed passes. The suite takes one pool seed per
mutant (different mutants start at different pool seeds, so together they cover the pool) to
stay inside CI's time; `TUTOR_MUTANT_SEEDS=3` runs every mutant on the whole pool, which is
the sweep to run after changing a checker.

The seeds of an exercise come from a small pool fixed by its id, and the reference solution is
checked on each pool seed before any mutant uses it: that proves the solution passes there,
and lets the warm runner keep that reference run, so each mutant's check runs only the
learner's side (half the CPU; the suite stays inside its time budget).
"""

from __future__ import annotations

import functools
import os
import tomllib
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from tutor.seeds import POOL, seed_pool
from tutor.course import Exercise
from tutor.runner.protocol import CRASHED, ERROR, FAILED, PASSED, SKIPPED, TIMEOUT, Verdict

Edit = tuple[str, str]
DEFAULT_SEEDS = 1  # per mutant in the suite; TUTOR_MUTANT_SEEDS=3 (or =all) sweeps the whole pool
# Chapters whose checks take about a second: every mutant there runs on the whole pool in the
# suite too, so a verdict that changes with the seed fails CI, not a learner.
FULL_POOL_CHAPTERS = ("02-custom-autograd", "09-data-loading")
LESSONS = Path(__file__).resolve().parents[2] / "lessons"
# The chapters whose checks take 10-45 s each (C++ builds, compiles, memory measurements,
# torch.func transforms, two-rank runs): their extra mutants and variants run on demand (see
# pytest_collection_modifyitems) to keep the suite under 20 minutes on 2 cores.
ON_DEMAND_FILES = (
    "test_ch01_torch_compile.py",
    "test_ch03_cpp_cuda_ops.py",
    "test_ch04_memory.py",
    "test_ch05_torch_func.py",
    "test_ch12_distributed.py",
)
REJECTED = (FAILED, ERROR, TIMEOUT, CRASHED)  # what counts as the check saying no


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


# each mutant takes `count` of the pool, starting where its edits say


def mutant_seeds(key: str, count: int | None = None, exercise_id: str | None = None) -> list[int]:
    """`count` (default: env TUTOR_MUTANT_SEEDS, else DEFAULT_SEEDS) distinct seeds fixed by `key`, drawn from
    the exercise's pool when `exercise_id` is given: a rerun of the same test uses the same
    seeds, so a failure reproduces, and different mutants cover different pool seeds."""
    n = count if count is not None else _seeds_for(exercise_id)
    assert n >= 1, "at least one seed"
    start = zlib.crc32(key.encode("utf-8"))
    if exercise_id is None:
        return [(start + k * 1_000_003) % 2**31 for k in range(n)]
    pool = seed_pool(exercise_id, max(POOL, n))  # the pool a learner's check draws from
    return [pool[(start + k) % len(pool)] for k in range(n)]


def _seeds_for(exercise_id: str | None) -> int:
    wanted = os.environ.get("TUTOR_MUTANT_SEEDS")
    if wanted:
        return POOL if wanted == "all" else int(wanted)
    if exercise_id is not None and chapter_folders().get(exercise_id) in FULL_POOL_CHAPTERS:
        return POOL
    return DEFAULT_SEEDS


@functools.cache
def chapter_folders() -> dict[str, str]:
    """exercise id -> its chapter's folder name (`02-custom-autograd`), from the manifests."""
    out = {}
    for manifest in LESSONS.glob("*/lesson.toml"):
        for step in tomllib.loads(manifest.read_text(encoding="utf-8")).get("steps", []):
            if step.get("kind") == "exercise":
                out[step["id"]] = manifest.parent.name
    return out


def exercise_marks(exercise: Exercise) -> list[pytest.MarkDecorator]:
    """Marks for a test of `exercise` outside its chapter's file: the chapter's xdist group (one
    warm runner keeps its reference runs), and a skip where this machine cannot run it."""
    marks = [pytest.mark.xdist_group(f"tests/chapters/test_ch{exercise.key.split('/')[0].replace('-', '_')}.py")]
    runs_here, why = exercise.needs.device_here(torch.cuda.device_count())
    if runs_here is None:
        marks.append(pytest.mark.skip(reason=f"{exercise.id} {why}"))
    return marks


_WARMED: set[tuple[str, int]] = set()


def _warm(check_code, solution_text, exercise_id: str, seed: int) -> None:
    """Check the reference solution on `seed` once per session: it must pass, and the runner
    then keeps its reference run for every mutant on that seed."""
    if (exercise_id, seed) in _WARMED:
        return
    _WARMED.add((exercise_id, seed))
    v = check_code(exercise_id, solution_text(exercise_id), seed=seed)
    assert v.status in (PASSED, SKIPPED), f"the reference solution fails on seed {seed}\n{describe(v)}"


def _edits(exercise_id: str, edits: tuple) -> tuple[Edit, ...]:
    if edits and isinstance(edits[0], str):
        assert len(edits) == 2, f"{exercise_id}: mutant(exercise_id, old, new) or mutant(exercise_id, (old, new), ...)"
        return (tuple(edits),)  # type: ignore[return-value]
    return tuple(edits)


@pytest.fixture
def mutant(check_code, solution_text) -> Callable[..., Verdict]:
    """mutant(exercise_id, old, new) -> the verdict on the exercise's reference solution with
    `old` replaced by `new`; mutant(exercise_id, (old, new), (old2, new2), ...) applies several
    edits in turn.

    The mutant runs on pool seeds (`seeds=N`, else env TUTOR_MUTANT_SEEDS, else 1) and every
    run must reject it (failed, error, timeout or crash): a wrong answer that passes on a lucky
    seed is a checker bug. Returns the first seed's verdict, for the test to assert its reason."""

    def run(exercise_id: str, *edits, seeds: int | None = None) -> Verdict:
        edits = _edits(exercise_id, edits)
        source = mutate(solution_text(exercise_id), *edits)
        chosen = mutant_seeds(f"{exercise_id}|{edits!r}", seeds, exercise_id)
        for s in chosen:
            _warm(check_code, solution_text, exercise_id, s)
        verdicts = [check_code(exercise_id, source, seed=s) for s in chosen]
        for v in verdicts:
            assert v.status in REJECTED, (
                f"the mutant was not rejected on seed {v.seed} "
                f"(seeds tried: {[x.seed for x in verdicts]})\n{describe(v)}"
            )
        return verdicts[0]

    return run


@pytest.fixture
def variant(check_code, solution_text) -> Callable[..., Verdict]:
    """variant(exercise_id, old, new) -> like `mutant`, for a correct-but-different solution: every
    seed must pass. Returns the first seed's verdict."""

    def run(exercise_id: str, *edits, seeds: int | None = None) -> Verdict:
        edits = _edits(exercise_id, edits)
        source = mutate(solution_text(exercise_id), *edits)
        chosen = mutant_seeds(f"variant|{exercise_id}|{edits!r}", seeds, exercise_id)
        for s in chosen:
            _warm(check_code, solution_text, exercise_id, s)
        verdicts = [check_code(exercise_id, source, seed=s) for s in chosen]
        for v in verdicts:
            assert_passes(v)
        return verdicts[0]

    return run


@pytest.fixture
def solution_verdict(check_code, solution_text) -> Callable[..., Verdict]:
    """solution_verdict(exercise_id) -> the verdict on the exercise's unchanged reference solution
    (on several seeds with `seeds=N`; the first verdict is returned, every one must pass then)."""

    def run(exercise_id: str, seeds: int | None = None) -> Verdict:
        if seeds is None:
            return check_code(exercise_id, solution_text(exercise_id))
        verdicts = [
            check_code(exercise_id, solution_text(exercise_id), seed=s)
            for s in mutant_seeds(f"solution|{exercise_id}", seeds)
        ]
        for v in verdicts:
            assert_passes(v)
        return verdicts[0]

    return run


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks into node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """One chapter's tests on one xdist worker (`--dist loadgroup`, set in pyproject): each
    worker keeps its own warm runner, and a chapter's reference runs are then made once,
    not once per worker."""
    for item in items:
        if "tests/chapters/" in item.nodeid and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        # In the slow chapters (ON_DEMAND_FILES) the extra mutants and variants run on demand;
        # their solutions, stubs, known mistakes (test_mistakes.py) and pool seeds
        # (test_pool.py) stay in the suite.
        name = item.nodeid.split("::")[-1]
        if any(f"tests/chapters/{f}::" in item.nodeid for f in ON_DEMAND_FILES) and not any(
            word in name for word in ("solution", "stub")
        ):
            item.add_marker(pytest.mark.on_demand)
    # Tests marked on_demand (the blind mutants of the slow chapters, chapter 3's extra
    # mutants) run with TUTOR_ON_DEMAND=all (or TUTOR_BLIND=all).
    if "all" not in (os.environ.get("TUTOR_ON_DEMAND"), os.environ.get("TUTOR_BLIND")):
        later = [item for item in items if item.get_closest_marker("on_demand")]
        if later:
            config.hook.pytest_deselected(items=later)
            items[:] = [item for item in items if not item.get_closest_marker("on_demand")]
