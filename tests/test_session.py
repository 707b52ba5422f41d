"""The learning rules in one place (tutor/session.py), as the app, watch and the CLI see them."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.courses import build_course_cpu_before_cuda
from tutor.course import Course, load_course
from tutor.progress import Progress
from tutor.runner.protocol import Verdict
from tutor.session import LearnerSession
from tutor.status import Status


@pytest.fixture
def course(tmp_path: Path) -> Course:
    root = build_course_cpu_before_cuda(tmp_path / "course")
    return load_course(root / "lessons", root / "solutions")


def test_the_step_after_a_pass_skips_what_this_machine_cannot_run(course: Course) -> None:
    session = LearnerSession(course, None)
    cpu = course.exercise("cpu-add")
    assert session.step_after_pass(cpu).id == "cuda-add"  # GPUs not known yet: assumed runnable
    session.gpus = 0
    assert session.step_after_pass(cpu).id == "outro"
    assert session.after_pass(cpu).id != "cuda-add"  # watch's rule agrees
    session.gpus = 1
    assert session.step_after_pass(cpu).id == "cuda-add"
    session.device = "cpu"  # --device cpu: no CUDA exercise runs
    assert session.step_after_pass(cpu).id == "outro"


def test_current_exercise_position_and_chapter_exercise(course: Course, tmp_path: Path) -> None:
    progress = Progress(tmp_path / "home")
    session = LearnerSession(course, progress)
    assert session.current_exercise().id == "sigmoid"  # nothing passed: the course's first
    progress.set_position(3, "intro")  # a reading step: that chapter's first unfinished exercise
    assert session.current_exercise().id == "cpu-add"
    progress.set_position(3, "cuda-add")
    assert session.current_exercise().id == "cuda-add"
    progress.record_run("cpu-add", Status.PASSED)
    assert session.chapter_exercise(course.chapter(3)).id == "cuda-add"
    assert session.start_position(None) == (3, "cuda-add")
    assert LearnerSession(course, None).current_exercise().id == "sigmoid"


def test_hints_and_the_solution_gate(course: Course, tmp_path: Path) -> None:
    session = LearnerSession(course, Progress(tmp_path / "home"))
    ex = course.exercise("cpu-add")
    assert session.solution_hints_left(ex) == 3
    assert [session.use_hint(ex) for _ in range(4)] == [1, 2, 3, 3]
    assert session.hints_used(ex) == 3 and session.solution_hints_left(ex) == 0
    other = course.exercise("cuda-add")
    assert session.solution_hints_left(other) == 3
    session.record(other, Verdict(status=Status.PASSED))
    assert session.solution_hints_left(other) == 0  # passed: compare freely


@pytest.mark.parametrize("status", [Status.SKIPPED, Status.CANCELLED])
def test_runs_that_say_nothing_about_the_code_are_not_recorded(course: Course, tmp_path: Path, status) -> None:
    progress = Progress(tmp_path / "home")
    session = LearnerSession(course, progress)
    ex = course.exercise("cpu-add")
    assert not session.record(ex, Verdict(status=status))
    assert progress.runs(ex.id) == []
    assert session.record(ex, Verdict(status="failed", reason="wrong"))
    assert [r.status for r in progress.runs(ex.id)] == ["failed"]


def test_status_words_styles_and_plain_strings() -> None:
    assert Status("passed") is Status.PASSED and Status.PASSED == "passed"
    assert Status.TIMEOUT.word == "timed out" and Status.FAILED.style == "red"
    assert Status.PASSED.headline() == "✔ PASS" and Status.PASSED.headline(ran=True) == "✔ RAN"
    assert Status.ERROR.headline(ran=True) == "✘ ERROR"
