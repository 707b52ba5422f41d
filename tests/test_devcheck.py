"""`tutor dev check`: the authoring gate over the whole course (stubs fail, solutions pass)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_dev_check_passes_for_the_whole_course(tmp_path):
    env = dict(os.environ, TUTOR_HOME=str(tmp_path), COLUMNS="200")
    done = subprocess.run([sys.executable, "-m", "tutor", "dev", "check"], capture_output=True, text=True,
                          env=env, timeout=1500)
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
    done = subprocess.run([sys.executable, "-m", "tutor", "dev", "check"], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 1
    assert "exercises/sigmoid.py: the stub has no TODO marker" in done.stdout
    assert "02-custom-autograd/sigmoid: the stub PASSES its check (it must fail)" in done.stdout
