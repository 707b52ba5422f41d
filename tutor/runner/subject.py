"""The process that runs the learner's code: loads the checker, the reference and the learner's
module, calls `check(ctx)`, and reports over a private socket (never stdout).

Runs forked from the warm server (one process per run) or as a torchrun rank.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import pickle
import resource
import signal
import socket
import struct
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from tutor.runner.protocol import RunRequest

_HEADER = struct.Struct("!I")


def send_message(sock: socket.socket, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("channel closed")
        buf += chunk
    return bytes(buf)


class SocketChannel:
    """The checking API's channel: every expectation waits for the judge's answer."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def expect(self, kind: str, name: str, actual: Any, expected: Any, options: dict[str, Any]) -> None:
        send_message(self.sock, ("expect", kind, name, actual, expected, options))
        answer = recv_exact(self.sock, 1)
        if answer != b"+":
            # The judge has its verdict and is about to stop this process; stop first.
            os._exit(3)

    def figure(self, name: str, value: Any) -> None:
        send_message(self.sock, ("figure", name, value))

    def phase(self, text: str, **info: Any) -> None:
        send_message(self.sock, ("phase", text, info))


def import_path(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def learner_frames(exc: BaseException, learner: Path) -> list[str]:
    """The traceback lines that point into the learner's file (else the innermost frame)."""
    tb = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in tb if Path(f.filename).resolve() == learner.resolve()]
    frames = mine or tb[-1:]
    lines: list[str] = []
    for f in frames:
        where = "your code" if f in mine else Path(f.filename).name
        lines.append(f"{where}, line {f.lineno}, in {f.name}")
        if f.line:
            lines.append(f"    {f.line.strip()}")
    return lines


def _tamper_snapshot() -> dict[tuple[str, str], Any]:
    """Identities of the torch functions checkers rely on, taken before the learner's code runs.

    Expected values are computed in this process, so code that replaces `torch.Tensor.__mul__`
    or `torch.sigmoid` could bend them; comparing identities at the end catches that.
    """
    import torch
    import torch.nn.functional as F

    snap: dict[tuple[str, str], Any] = {}
    for owner_name, owner in (("torch", torch), ("torch.Tensor", torch.Tensor),
                              ("torch.nn.functional", F), ("torch.testing", torch.testing),
                              ("torch.autograd", torch.autograd)):
        # dir() includes what Tensor inherits from its C base class, where __mul__ and most
        # methods live; a patch on torch.Tensor shadows those.
        for name in dir(owner):
            try:
                value = getattr(owner, name)
            except Exception:
                continue
            if callable(value) and not isinstance(value, type):
                snap[(owner_name, name)] = value
    return snap


def _tampered(before: dict[tuple[str, str], Any]) -> list[str]:
    after = _tamper_snapshot()
    changed = []
    for key, value in before.items():
        now = after.get(key)
        # Bound classmethods are new objects on every lookup but compare equal; torch itself
        # rewraps a few functions when a subsystem loads (dynamo wraps manual_seed).
        if now is not value and now != value and not _from_torch(now):
            changed.append(f"{key[0]}.{key[1]}")
    return changed


def _from_torch(value: Any) -> bool:
    module = getattr(value, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def limit_memory(megabytes: int | None) -> None:
    """Cap the address space at what the process has now plus `megabytes` (CPU-only runs:
    CUDA maps huge virtual ranges, so RLIMIT_AS would break it)."""
    if not megabytes:
        return
    try:
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        cap = vm + megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (OSError, ValueError, StopIteration):
        pass


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the supervising process dies, so nothing is left running."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def prepare_environment(request: RunRequest, tmpdir: Path) -> None:
    """Caches shared across runs (builds are reused), everything else in the run's tmpdir."""
    cache = Path(request.cache_dir) if request.cache_dir else tmpdir / "cache"
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(cache / "torch_extensions"))
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache / "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(cache / "triton"))
    os.environ["TMPDIR"] = str(tmpdir)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.chdir(tmpdir)


def run_subject(request: RunRequest, sock_path: str, tmpdir: Path, rank: int = 0,
                world_size: int = 1) -> None:
    """Run the check and report; never returns (exits the process)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sock_path)
    send_message(sock, ("hello", rank, os.getpid()))
    channel = SocketChannel(sock)
    learner_path = Path(request.code)
    code = 0
    try:
        import torch

        from tutor import checking

        torch.manual_seed(request.seed or 0)
        if not request.checker:
            # A plain program (a finished type-along passage): run it as a script; its output
            # is the result.
            import runpy

            runpy.run_path(str(learner_path), run_name="__main__")
            send_message(sock, ("done",))
            os._exit(0)
        # A chapter's checkers may share helpers in their own folder (checks/_common.py).
        sys.path.insert(0, str(Path(request.checker).parent))
        checker = import_path(Path(request.checker), "tutor_checker")
        untouched = _tamper_snapshot()
        ctx = checking.Context(
            learner=None, reference=None, channel=channel, seed=request.seed or 0,
            device=request.device, tmpdir=tmpdir, learner_path=learner_path, rank=rank,
            world_size=world_size,
            learner_loader=lambda: import_path(learner_path, "learner_solution"),
            reference_loader=lambda: import_path(Path(request.solution), "reference_solution"))
        checker.check(ctx)
        replaced = _tampered(untouched)
        if replaced:
            send_message(sock, ("failed", f"your code replaced {', '.join(replaced[:3])}; the check "
                                          "cannot trust results computed with a patched torch", []))
        else:
            send_message(sock, ("done",))
    except BaseException as exc:  # noqa: BLE001 - everything the learner raises is reported
        from tutor.checking import CheckFailed

        if isinstance(exc, CheckFailed):
            send_message(sock, ("failed", exc.reason, exc.details))
        elif isinstance(exc, SystemExit):
            send_message(sock, ("exit", exc.code))
        elif isinstance(exc, ConnectionError):
            code = 4
        else:
            summary = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
            if isinstance(exc, MemoryError):
                summary = "MemoryError: your code ran out of memory (the run's memory cap was reached)"
            try:
                send_message(sock, ("error", summary, learner_frames(exc, learner_path)))
            except Exception:  # the message itself may not pickle
                code = 5
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
    os._exit(code)


def main() -> None:
    """Entry point for torchrun ranks: `python -m tutor.runner.subject`."""
    request = RunRequest.from_json(os.environ["TUTOR_REQUEST"])
    tmpdir = Path(os.environ["TUTOR_TMPDIR"])
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank_dir = tmpdir / f"rank{rank}"
    rank_dir.mkdir(parents=True, exist_ok=True)
    _die_with_parent()  # torchrun's own death must not leave ranks running
    if request.device == "cpu":
        limit_memory(request.memory_limit_mb)
    prepare_environment(request, rank_dir)
    run_subject(request, os.environ["TUTOR_SOCKET"], rank_dir, rank, world)


if __name__ == "__main__":
    main()
