"""`tutor doctor` names the fix for each missing prerequisite (tutor/cli/doctor.py)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

import tutor.cli.doctor as doctor_mod


def test_every_missing_prerequisite_comes_with_its_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, course_root: Path
) -> None:
    monkeypatch.setenv("TUTOR_COURSE", str(course_root))
    monkeypatch.setattr(
        doctor_mod,
        "probe",
        lambda: {
            "torch_error": "ModuleNotFoundError: torch",
            "pytorch_lightning_error": "missing",
            "bitsandbytes_error": "missing",
        },
    )
    monkeypatch.setattr(doctor_mod.shutil, "which", lambda name: None)
    monkeypatch.setattr(doctor_mod, "_ninja_from_pip", lambda: None)
    monkeypatch.setattr(doctor_mod, "python_headers", lambda: None)
    out = io.StringIO()
    code = doctor_mod.doctor(Console(file=out, width=200, color_system=None), tmp_path)
    text = out.getvalue()
    assert code == 1  # no torch: nothing can run
    assert "fix: pip install torch --index-url https://download.pytorch.org/whl/cpu" in text
    assert "fix: pip install ninja" in text and "fix: pip install pytorch-lightning" in text
    if sys.platform.startswith("linux"):
        assert "fix: sudo apt install build-essential" in text
        assert f"python{sys.version_info.major}.{sys.version_info.minor}-dev" in text
    assert "Python.h not found" in text


def test_nothing_to_fix_means_no_fix_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, course_root: Path) -> None:
    monkeypatch.setenv("TUTOR_COURSE", str(course_root))
    monkeypatch.setattr(
        doctor_mod,
        "probe",
        lambda: {
            "torch": "2.13.0",
            "cuda": False,
            "gpus": 0,
            "threads": 2,
            "pytorch_lightning": "2.6",
            "bitsandbytes": "0.50",
        },
    )
    monkeypatch.setattr(doctor_mod.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(doctor_mod, "python_headers", lambda: Path("/usr/include/Python.h"))
    out = io.StringIO()
    assert doctor_mod.doctor(Console(file=out, width=200, color_system=None), tmp_path) == 0
    assert "fix:" not in out.getvalue()
