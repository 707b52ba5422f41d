"""The `tutor` command: real subprocesses, as a learner would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def tutor(*args: str, home: Path | None = None, env: dict | None = None, timeout: float = 120):
    full_env = dict(os.environ, **(env or {}))
    if home is not None:
        full_env["TUTOR_HOME"] = str(home)
    full_env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "tutor", *args], capture_output=True, text=True, env=full_env, timeout=timeout
    )


@pytest.mark.parametrize(
    "args,needle",
    [
        (("start", "chapter", "14"), "there is no chapter 14; choose 1-13"),
        (("start", "chapter", "x"), "'x' is not a chapter number; choose 1-13"),
        (("start", "0"), "there is no chapter 0; choose 1-13"),
        (("start", "chapter"), "which chapter? choose 1-13"),
        (("hint", "no-such-exercise"), "unknown exercise 'no-such-exercise'; `tutor list` shows"),
        (("reset", "no-such-exercise"), "unknown exercise 'no-such-exercise'; `tutor list` shows"),
        (("check", "sigmod"), "unknown exercise 'sigmod'; did you mean sigmoid?"),
        (("hint", "leaky_relu"), "did you mean leaky-relu?"),
        (("check", "chapter", "99"), "there is no chapter 99"),
        (("frobnicate",), "invalid choice: 'frobnicate'"),
        (("start", "--device", "tpu"), "invalid choice: 'tpu'"),
    ],
)
def test_bad_input_is_one_line_exit_2(home, args, needle):
    done = tutor(*args, home=home)
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert needle in lines[0]
    assert "Traceback" not in done.stderr + done.stdout


def test_list_shows_every_chapter_and_progress(home):
    from tutor.progress import Progress

    Progress(home).record_run("sigmoid", "passed")
    done = tutor("list", home=home)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 13  # twelve topics and the capstone
    autograd = next(r for r in rows if "Custom autograd" in r)
    assert "1/" in autograd and "just now" in autograd
    assert not any("▶" in r for r in rows)  # never started: nowhere to mark


def test_list_marks_where_the_learner_is(home):
    from tutor.progress import Progress

    Progress(home).set_position(2, "sigmoid")
    done = tutor("list", home=home)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    marked = [line for line in lines if "▶" in line]
    assert marked[0].startswith("│ ▶ 2 │ Custom autograd")
    assert "you are here: step 4/" in marked[1] and "Sigmoid" in marked[1]
    assert any("where you left off" in line for line in lines)


def test_hint_reveals_next_hint_and_counts_it(home, course):
    ex = course.exercise("sigmoid")
    first = tutor("hint", "sigmoid", home=home)
    assert first.returncode == 0
    assert f"hint 1/{len(ex.hints)}" in first.stdout and "hint 2/" not in first.stdout
    second = tutor("hint", "sigmoid", home=home)
    assert f"hint 2/{len(ex.hints)}" in second.stdout
    from tutor.progress import Progress

    assert Progress(home).exercise("sigmoid").hints_used == 2


def test_reset_backs_up_learner_code(home, course):
    from tutor.workspace import Workspace

    ws = Workspace(home)
    ws.ensure(course)
    ex = course.exercise("sigmoid")
    ws.write(ex, "# my attempt\n")
    done = tutor("reset", "sigmoid", home=home)
    assert done.returncode == 0
    assert ws.read(ex) == ex.stub.read_text()
    backups = list((home / "backups").rglob("*.py"))
    assert len(backups) == 1 and backups[0].read_text() == "# my attempt\n"


def test_workspace_flag_overrides_env(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    done = tutor("--workspace", str(b), "hint", "sigmoid", home=a)
    assert done.returncode == 0
    assert (b / "progress.sqlite3").exists() and not (a / "progress.sqlite3").exists()


def test_broken_lesson_is_one_line(tmp_path, home):
    import shutil

    root = Path(__file__).resolve().parents[1]
    course = tmp_path / "course"
    shutil.copytree(root / "lessons", course / "lessons")
    shutil.copytree(root / "solutions", course / "solutions")
    manifest = course / "lessons" / "02-custom-autograd" / "lesson.toml"
    manifest.write_text(manifest.read_text().replace("hints = [", "hints_ = [", 1))
    done = tutor("list", home=home, env={"TUTOR_COURSE": str(course)})
    assert done.returncode == 1
    assert done.stderr.strip().startswith("tutor: broken lesson file: lessons/02-custom-autograd/lesson.toml: steps[")
    assert "hints: is required" in done.stderr
    assert "Traceback" not in done.stderr


def test_unwritable_home_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    done = tutor("--workspace", str(blocker / "home"), "list")
    assert done.returncode == 1
    assert done.stderr.startswith("tutor: ") and "Traceback" not in done.stderr


def test_start_argument_forms_resolve_chapter(home, course):
    from tutor.cli.common import UsageError, parse_chapter

    assert parse_chapter(["chapter", "3"], course) == 3
    assert parse_chapter(["3"], course) == 3
    assert parse_chapter([], course) is None
    with pytest.raises(UsageError):
        parse_chapter(["3", "4"], course)


@pytest.mark.slow
def test_check_solutions_json_and_exit_codes(home):
    ok = tutor("check", "sigmoid", "--solutions", "--json", home=home)
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data[0]["exercise"] == "sigmoid" and data[0]["status"] == "passed"
    assert data[0]["duration_s"] > 0 and data[0]["reason"] == "all checks passed"
    timed = json.loads(tutor("check", "func-maml", "--solutions", "--json", home=home).stdout)
    assert timed[0]["figures"]["time"]["speedup"] > 0
    assert timed[0]["figures"]["time"]["learner_s"] > 0 and timed[0]["figures"]["time"]["reference_s"] > 0
    bad = tutor("check", "sigmoid", home=home)  # the learner's untouched stub
    assert bad.returncode == 1
    assert "NotImplementedError" in bad.stdout
    from tutor.progress import Progress

    runs = Progress(home).runs("sigmoid")
    assert {r.role for r in runs} == {"solution", "learner"}


@pytest.mark.slow
def test_doctor_reports_machine(home):
    done = tutor("doctor", home=home, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "torch" in done.stdout and "2." in done.stdout
    assert "C++ compiler" in done.stdout and "what runs here" in done.stdout


def test_stats_summarises_typing_history(home):
    import time as _time

    from tutor.progress import Progress, TypingRecord

    p = Progress(home)
    p.record_typing(TypingRecord("02-custom-autograd/anatomy", _time.time(), 41.5, 50.0, 0.96, 3, 1, 60.0))
    p.record_typing(TypingRecord("02-custom-autograd/anatomy", _time.time(), 55.0, 58.0, 0.99, 1, 0, 45.0))
    done = tutor("stats", home=home)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if "Custom autograd" in line)
    assert "55" in row  # best net WPM


def test_start_without_a_terminal_is_one_line_and_saves_the_position(home):
    done = tutor("start", "chapter", "7", home=home)
    assert done.returncode == 1
    assert (
        done.stderr.strip() == "tutor: `tutor start` needs an interactive terminal; for headless use run `tutor check`"
    )
    from tutor.progress import Progress

    assert Progress(home).last_position()[0] == 7
    assert (home / "workspace" / "07-torchscript").is_dir()  # the workspace was set up
