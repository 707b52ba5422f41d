"""A plain (non-editable) `pip install` of the built wheel finds the course inside the package."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_ships_lessons_and_solutions(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(dist.glob("*.whl"))
    env_dir = tmp_path / "venv"
    # This interpreter's site-packages supply torch and friends (a plain path in a .pth file:
    # the editable install's import hook there is not run, so `tutor` can only come from the
    # wheel). `system_site_packages` would mean the *base* interpreter's packages, which inside
    # a fresh venv lack every dependency.
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    venv_site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(venv_site) / "_tutor_test_deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TUTOR_COURSE")}
    where = subprocess.run(
        [str(py), "-c", "import tutor.paths as p; print(p.course_root())"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
        env=clean,
    ).stdout.strip()
    assert where.startswith(str(env_dir)), where
    assert (Path(where) / "lessons" / "02-custom-autograd" / "lesson.toml").is_file()
    assert (Path(where) / "solutions" / "02-custom-autograd").is_dir()
    done = subprocess.run(
        [str(env_dir / "bin" / "tutor"), "--workspace", str(tmp_path / "home"), "list"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env=clean,
    )
    assert done.returncode == 0, done.stderr
    assert "Custom autograd Functions" in done.stdout
    listing = subprocess.run([sys.executable, "-m", "zipfile", "-l", str(wheel)], capture_output=True, text=True).stdout
    assert "tutor.tcss" in listing
    # The judging files' hashes, so a checker rewritten after install never judges a check.
    record = Path(where) / "COURSE-SHA256.json"
    assert record.is_file() and "lessons/02-custom-autograd/checks/sigmoid.py" in record.read_text()
