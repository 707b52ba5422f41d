"""Fixtures for the UI tests: a fixed course, a tmp tutor home, app factories, fake runners."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Callable, Iterator

import pytest

from support.courses import build_course
from tutor.course import Course, load_course
from tutor.ui.app import TutorApp


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run `async def` tests here with asyncio.run: App.run_test() needs a loop, and the
    project has no asyncio pytest plugin."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
    return True


@pytest.fixture(scope="session")
def course_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="session")
def course(course_root: Path) -> Course:
    return load_course(course_root / "lessons", course_root / "solutions")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("TUTOR_HOME", str(h))
    return h


@pytest.fixture
def make_app(course: Course, home: Path) -> Iterator[Callable[..., TutorApp]]:
    apps: list[TutorApp] = []

    def make(chapter: int = 2, step_id: str | None = None, runner: object | None = None, **kw: object) -> TutorApp:
        kw.setdefault("warm_runner", False)
        if runner is not None:
            kw["runner_factory"] = lambda: runner
        app = TutorApp(course, home, chapter, step_id, **kw)  # type: ignore[arg-type]
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close_resources()
