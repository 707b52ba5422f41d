"""Process hygiene for the runner (Linux; each call is a no-op where the kernel says no).

- The runner's own processes (server, supervisor, reference run) are made non-dumpable, so a
  learner's process running as the same user cannot open their `/proc/PID/fd/*` (the pipe to
  the app, the judge's sockets) or read and write their memory.
- A learner's process drops CAP_SYS_PTRACE, which root would otherwise use to step over that.
- The supervisor is a child subreaper: every process the run starts, double-forked, `setsid`
  or torchrun rank, stays its descendant, and `kill_descendants` finds and kills them all.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_CAP_SYS_PTRACE = 19

try:
    _libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - not Linux
    _libc = None


def _prctl(option: int, arg: int) -> bool:
    if _libc is None:
        return False
    try:
        return bool(_libc.prctl(option, arg, 0, 0, 0) == 0)
    except AttributeError:  # pragma: no cover
        return False


def make_private() -> None:
    """Not dumpable: other processes of this user cannot open /proc/PID/fd or ptrace us."""
    _prctl(_PR_SET_DUMPABLE, 0)


def die_with_parent() -> None:
    """SIGKILL when the parent process dies."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process instead of init."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_ptrace() -> None:
    """Drop CAP_SYS_PTRACE from this process and everything it starts (matters when run as root)."""
    if _libc is None:
        return
    _prctl(_PR_CAPBSET_DROP, _CAP_SYS_PTRACE)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    try:
        if _libc.capget(ctypes.byref(header), data) != 0:
            return
        mask = ~(1 << _CAP_SYS_PTRACE) & 0xFFFFFFFF
        data[0].effective &= mask
        data[0].permitted &= mask
        data[0].inheritable &= mask
        _libc.capset(ctypes.byref(header), data)
    except AttributeError:  # pragma: no cover
        pass


def close_fds_except(keep: set[int]) -> None:
    """Close every inherited descriptor but stdio and `keep` (the run's own channel)."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def stopped(pid: int) -> bool:
    """The process is stopped (SIGSTOP) or held by a tracer: it will not run on its own. False
    where /proc cannot say (the caller's other signs decide then)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


def children(pid: int | None = None) -> list[int]:
    """Live child processes of `pid` (default: this process)."""
    pid = pid or os.getpid()
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


def kill_descendants(spare: set[int] = frozenset(), deadline_s: float = 2.0) -> None:  # type: ignore[assignment]
    """SIGKILL every descendant of this (subreaper) process except `spare`, and reap them.

    Killing a child orphans its own children, which the kernel re-parents to us: repeat until
    no child is left."""
    end = time.monotonic() + deadline_s
    while True:
        kids = [c for c in children() if c not in spare]
        for c in kids:
            try:
                os.kill(c, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        reap_all(spare)
        if not kids or time.monotonic() > end:
            return
        time.sleep(0.005)


def reap_all(spare: set[int] = frozenset()) -> dict[int, int]:  # type: ignore[assignment]
    """Collect the exit status of every finished child except `spare`; never blocks."""
    statuses: dict[int, int] = {}
    for c in children():
        if c in spare or c in statuses:
            continue
        try:
            pid, status = os.waitpid(c, os.WNOHANG)
        except ChildProcessError:
            continue
        if pid:
            statuses[pid] = status
    return statuses
