"""Shared fixtures: an isolated tutor home, and a warm runner for checks through the real runner."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tutor.course import Course, load_course
from tutor.runner.client import Runner
from tutor.runner.protocol import Verdict

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def shared_build_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One C++/Inductor build cache for every runner the suite starts (its own fixtures and
    the `tutor` subprocesses), so each extension is compiled once per session, not per test."""
    cache = Path(os.environ.get("TUTOR_TEST_CACHE") or tmp_path_factory.getbasetemp().parent / "tutor-build-cache")
    cache.mkdir(parents=True, exist_ok=True)
    old = os.environ.get("TUTOR_CACHE")
    os.environ["TUTOR_CACHE"] = str(cache)
    yield cache
    if old is None:
        os.environ.pop("TUTOR_CACHE", None)
    else:
        os.environ["TUTOR_CACHE"] = old


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh tutor home for one test (TUTOR_HOME points at it)."""
    h = tmp_path / "home"
    monkeypatch.setenv("TUTOR_HOME", str(h))
    return h


@pytest.fixture(scope="session")
def course() -> Course:
    return load_course()


@pytest.fixture(scope="session")
def runner(shared_build_cache: Path) -> Iterator[Runner]:
    """One warm runner for the whole session (build caches shared across tests)."""
    r = Runner(cache_dir=shared_build_cache, device="cpu")
    yield r
    r.close()


@pytest.fixture
def check_code(runner: Runner, course: Course, tmp_path: Path) -> Callable[..., Verdict]:
    """check_code("sigmoid", source_text) -> Verdict, through the real runner.

    For mutant tests: take the solution, break it the way a learner would, and assert the
    verdict fails with a helpful reason.
    """
    counter = iter(range(10_000))

    def run(exercise_id: str, source: str | Path, seed: int | None = None) -> Verdict:
        exercise = course.exercise(exercise_id)
        if isinstance(source, Path):
            path = source
        else:
            path = tmp_path / f"{exercise.stub.stem}_{next(counter)}" / exercise.stub.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8")
        return runner.check(exercise, path, seed=seed)

    return run


@pytest.fixture
def solution_text(course: Course) -> Callable[[str], str]:
    """solution_text("sigmoid") -> the reference solution's source, to mutate."""
    return lambda exercise_id: course.exercise(exercise_id).solution.read_text(encoding="utf-8")
