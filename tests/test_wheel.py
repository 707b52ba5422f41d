"""A plain (non-editable) `pip install` of the built wheel finds the course inside the package."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_ships_lessons_and_solutions(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    wheel = next(dist.glob("*.whl"))
    env_dir = tmp_path / "venv"
    # System site-packages supply torch and friends; the wheel itself goes into the venv, so the
    # tutor that runs is the installed copy, not this checkout.
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    where = subprocess.run([str(py), "-c", "import tutor.paths as p; print(p.course_root())"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout.strip()
    assert where.startswith(str(env_dir)), where
    assert (Path(where) / "lessons" / "02-custom-autograd" / "lesson.toml").is_file()
    assert (Path(where) / "solutions" / "02-custom-autograd").is_dir()
    done = subprocess.run([str(env_dir / "bin" / "tutor"), "--workspace", str(tmp_path / "home"), "list"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Custom autograd Functions" in done.stdout
    assert "tutor.tcss" in subprocess.run([sys.executable, "-m", "zipfile", "-l", str(wheel)],
                                          capture_output=True, text=True).stdout
