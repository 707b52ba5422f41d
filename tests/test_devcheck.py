"""`tutor dev check`: the authoring gate over the whole course (stubs fail, solutions pass)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_dev_check_rules_pass_for_the_whole_course(tmp_path):
    """Every static rule over every chapter (manifests, stubs, key lines, translations). Running
    every stub and solution is tests/chapters' job; running every targeted hint's mutant is the
    author's `tutor dev check` (the next test runs all of it on one chapter)."""
    env = dict(os.environ, TUTOR_HOME=str(tmp_path), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "dev", "check", "--no-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "0 problem(s)" in done.stdout


@pytest.mark.slow
def test_dev_check_runs_a_chapter_end_to_end(tmp_path):
    """Stubs fail, solutions pass on two seeds, and each targeted hint's mutant reaches it."""
    env = dict(os.environ, TUTOR_HOME=str(tmp_path), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "dev", "check", "--chapter", "2", "--seeds", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "0 problem(s)" in done.stdout


@pytest.mark.slow
def test_dev_check_reports_a_stub_that_passes_and_a_missing_todo(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "lessons" / "02-custom-autograd", course / "lessons" / "02-custom-autograd")
    shutil.copytree(ROOT / "solutions" / "02-custom-autograd", course / "solutions" / "02-custom-autograd")
    stub = course / "lessons" / "02-custom-autograd" / "exercises" / "sigmoid.py"
    stub.write_text((course / "solutions" / "02-custom-autograd" / "sigmoid.py").read_text())
    env = dict(os.environ, TUTOR_HOME=str(tmp_path / "home"), TUTOR_COURSE=str(course), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "dev", "check"], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 1
    assert "exercises/sigmoid.py: the stub has no TODO marker" in done.stdout
    assert "02-custom-autograd/sigmoid: the stub PASSES its check (it must fail)" in done.stdout


def test_no_stub_contains_a_key_line_of_its_solution(course):
    """Issue 15: the stubs state the task, the solutions' `# key` lines are the answer."""
    from tutor.course_rules import key_line_problems

    found = [p for e in course.exercises for p in key_line_problems(e.stub, e.solution, course)]
    assert not found, "\n".join(found)


def test_key_lines_are_compared_as_tokens():
    from tutor.course_rules import code_lines

    solution = code_lines(
        "y = torch.where(x > 0, g, g*0.1)  # key\nz = 1  # keyboard\n"
        'SRC = """\n  out[i] = v > 0 ? v : 0;  // key\n"""\n'
    )
    stub = code_lines('y = torch.where( x>0,g,g * 0.1 )   # TODO\nSRC = """\n  out[i]=v>0?v:0;\n"""\n')
    keys = {line.tokens for line in solution if line.key}
    assert len(keys) == 2  # `# keyboard` is not a mark
    assert [line.number for line in stub if line.tokens in keys] == [1, 3]


def test_dev_check_reports_a_stub_that_contains_a_key_line(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "lessons" / "02-custom-autograd", course / "lessons" / "02-custom-autograd")
    shutil.copytree(ROOT / "solutions" / "02-custom-autograd", course / "solutions" / "02-custom-autograd")
    solution = course / "solutions" / "02-custom-autograd" / "sigmoid.py"
    stub = course / "lessons" / "02-custom-autograd" / "exercises" / "sigmoid.py"
    planted = "PLANTED_ANSWER = grad_out * s * (1 - s)"
    solution.write_text(solution.read_text() + f"\n{planted}  # key\n")
    lines = stub.read_text().splitlines()
    lines.append("PLANTED_ANSWER=grad_out*s*( 1-s )  # TODO: is this it?")  # the same tokens, spaced differently
    stub.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, TUTOR_HOME=str(tmp_path / "home"), TUTOR_COURSE=str(course), COLUMNS="400")
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "dev", "check", "--no-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"lessons/02-custom-autograd/exercises/sigmoid.py:{len(lines)}: the stub contains the solution's key line"
        in done.stdout
    )
    assert "Traceback" not in done.stdout + done.stderr
