"""Course files verified against the hashes recorded at build time (issue 25, item 4): a
checker rewritten on disk by learner code never judges a later check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tutor import coursefiles

ROOT = Path(__file__).resolve().parents[1]
TUTOR = [str(Path(sys.executable).with_name("tutor"))]

GUTTED = "\n\ndef check(ctx):  # rewritten by learner code\n    return None\n"


@pytest.fixture
def installed_course(tmp_path: Path) -> Path:
    """A copy of the course with the hash record a wheel carries."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "lessons", root / "lessons")
    shutil.copytree(ROOT / "solutions", root / "solutions")
    coursefiles.write_manifest(root, root / coursefiles.MANIFEST)
    return root


def test_the_record_covers_every_checker_helper_and_solution(installed_course):
    recorded = json.loads((installed_course / coursefiles.MANIFEST).read_text())
    assert "lessons/02-custom-autograd/checks/sigmoid.py" in recorded
    assert "solutions/02-custom-autograd/sigmoid.py" in recorded
    assert any(name.startswith("lessons/01-torch-compile/checks/_") for name in recorded)  # helpers
    verifier = coursefiles.Verifier(installed_course)
    checker = installed_course / "lessons/02-custom-autograd/checks/sigmoid.py"
    verifier.verify(checker, checker.read_bytes())
    with pytest.raises(coursefiles.CourseFileChanged):
        verifier.verify(checker, checker.read_bytes() + b"\n")
    guide = installed_course / "lessons/02-custom-autograd/lesson.toml"
    verifier.verify(guide, b"anything")  # not a judging file


def test_a_source_checkout_has_no_record_and_verifies_nothing():
    assert not (ROOT / coursefiles.MANIFEST).exists()
    coursefiles.Verifier(ROOT).verify(ROOT / "lessons/02-custom-autograd/checks/sigmoid.py", b"edited by an author")


@pytest.mark.slow
def test_a_checker_rewritten_on_disk_does_not_pass_the_next_check(installed_course, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
    env["TUTOR_COURSE"] = str(installed_course)
    home = tmp_path / "home"

    def check() -> dict:
        done = subprocess.run(
            [*TUTOR, "--workspace", str(home), "check", "sigmoid", "--json"],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
        assert "Traceback" not in done.stderr
        [result] = json.loads(done.stdout)
        return result

    assert check()["status"] == "error"  # the untouched stub
    checker = installed_course / "lessons/02-custom-autograd/checks/sigmoid.py"
    checker.write_text(checker.read_text() + GUTTED)  # what the learner's first run did
    result = check()
    assert result["status"] == "error"
    assert "not the one installed with tutor" in result["reason"]
    assert "checks/sigmoid.py" in result["reason"]
