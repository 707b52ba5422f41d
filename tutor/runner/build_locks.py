"""Build locks that a killed run cannot leave behind.

`torch.utils.cpp_extension` serialises builds of one extension with a lock file that only the
builder removes. The runner kills runs that are done (a failed check ends the reference run
at once, a timeout ends the learner's), so a build can die holding its lock, and every later
build of that extension would wait forever. Here the lock file records its holder's pid, and
a waiter removes a lock whose holder is gone.
"""

from __future__ import annotations

import os
import time
from typing import Any

STALE_EMPTY_S = 600.0  # a lock without a pid (written by another tool) counts as stale after this


def _holder_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _stale(path: str) -> bool:
    try:
        with open(path) as f:
            text = f.read().strip()
        if text.isdigit():
            return not _holder_alive(int(text))
        return time.time() - os.path.getmtime(path) > STALE_EMPTY_S
    except OSError:
        return False


def install() -> None:
    """Patch torch's FileBaton (call once, in the warm server, before any run is forked)."""
    from torch.utils import file_baton

    def try_acquire(self: Any) -> bool:
        for _ in range(2):
            try:
                self.fd = os.open(self.lock_file_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not _stale(self.lock_file_path):
                    return False
                try:  # the last builder died mid-build: build it ourselves
                    os.remove(self.lock_file_path)
                except OSError:
                    return False
                continue
            os.write(self.fd, str(os.getpid()).encode())
            return True
        return False

    def wait(self: Any) -> None:
        while os.path.exists(self.lock_file_path):
            if _stale(self.lock_file_path):
                try:
                    os.remove(self.lock_file_path)
                except OSError:
                    pass
                return
            time.sleep(self.wait_seconds)

    file_baton.FileBaton.try_acquire = try_acquire  # type: ignore[method-assign]
    file_baton.FileBaton.wait = wait  # type: ignore[method-assign]
