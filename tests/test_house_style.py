"""The house habits, checked with the tests so the README's one test command covers them:
lint (ruff), formatting of the project's code, and the types (mypy, configured in pyproject)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_in_code_lessons_and_solutions():
    r = _run("ruff", "check", "tutor", "tests", "bench", "lessons", "solutions")
    assert r.returncode == 0, r.stdout + r.stderr


def test_code_is_formatted():
    r = _run("ruff", "format", "--check", "tutor", "bench", "tests")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_types_check():
    r = _run("mypy")
    assert r.returncode == 0, r.stdout + r.stderr
