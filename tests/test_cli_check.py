"""`tutor check` in every form the README promises, through the real command and runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.courses import build_course

TUTOR = [str(Path(sys.executable).with_name("tutor"))]


def tutor(*args: str, home: Path, course: Path | None = None, timeout: float = 300):
    env = dict(os.environ, TUTOR_HOME=str(home), COLUMNS="200")
    if course is not None:
        env["TUTOR_COURSE"] = str(course)
    return subprocess.run([*TUTOR, *args], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture
def small_course(tmp_path: Path) -> Path:
    return build_course(tmp_path / "course")


@pytest.mark.slow
def test_check_with_no_argument_checks_the_current_exercise(tmp_path, small_course):
    home = tmp_path / "home"
    tutor("start", "chapter", "2", home=home, course=small_course)  # no terminal: saves the position
    done = tutor("check", "--json", home=home, course=small_course)
    assert done.returncode == 1, done.stderr
    results = json.loads(done.stdout)
    assert [r["exercise"] for r in results] == ["sigmoid"]
    assert results[0]["status"] == "error" and "NotImplementedError" in results[0]["reason"]


@pytest.mark.slow
def test_check_all_chapter_and_stubs(tmp_path, small_course):
    home = tmp_path / "home"
    everything = json.loads(
        tutor("check", "--all", "--stubs", "--json", "--device", "cpu", home=home, course=small_course).stdout
    )
    assert {r["exercise"]: r["status"] for r in everything} == {"sigmoid": "error", "cuda-add": "skipped"}
    chapter = tutor("check", "chapter", "2", "--solutions", home=home, course=small_course)
    assert chapter.returncode == 0, chapter.stdout + chapter.stderr
    assert "sigmoid (solution)" in chapter.stdout and "1 passed" in chapter.stdout


@pytest.mark.slow
def test_seed_reproduces_a_run_and_every_failure_names_its_seed(tmp_path, small_course):
    home = tmp_path / "home"
    first = tutor("check", "sigmoid", "--seed", "1234", "--json", home=home, course=small_course)
    assert json.loads(first.stdout)[0]["seed"] == 1234
    table = tutor("check", "sigmoid", "--seed", "1234", home=home, course=small_course)
    assert "tutor check sigmoid --seed 1234" in table.stdout


def test_start_with_no_argument_resumes_where_the_learner_left(tmp_path, small_course):
    home = tmp_path / "home"
    tutor("start", "chapter", "3", home=home, course=small_course)
    again = tutor("start", home=home, course=small_course)
    assert again.returncode == 1 and "interactive terminal" in again.stderr
    from tutor.progress import Progress

    assert Progress(home).last_position()[0] == 3
