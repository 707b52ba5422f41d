"""A build lock left by a killed run does not block later builds."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from tutor.runner import build_locks  # noqa: E402


def test_a_lock_whose_holder_died_is_taken_over(tmp_path):
    build_locks.install()
    from torch.utils.file_baton import FileBaton

    lock = tmp_path / "lock"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock.write_text(str(dead.pid))
    baton = FileBaton(str(lock))
    assert baton.try_acquire()
    assert lock.read_text() == str(os.getpid())
    baton.release()
    assert not lock.exists()


def test_a_lock_held_by_a_live_process_is_respected(tmp_path):
    build_locks.install()
    from torch.utils.file_baton import FileBaton

    lock = tmp_path / "lock"
    lock.write_text(str(os.getpid()))
    assert not FileBaton(str(lock)).try_acquire()
    assert lock.exists()
