"""The runner as the app and the CLI see it. Plain Python: no torch, no Textual.

`Runner` keeps one warm server process (`python -m tutor.runner.server`) that has imported torch,
and asks it for one run at a time. `run()` blocks (call it from a worker thread in the UI);
`cancel()` may be called from any thread.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tutor.course import Exercise
from tutor.runner.protocol import CANCELLED, ERROR, SKIPPED, Event, RunRequest, Verdict

OnEvent = Callable[[Event], None]

DEFAULT_MEMORY_LIMIT_MB = 8192


class RunnerError(Exception):
    """The runner process could not be started or died."""


@dataclass(frozen=True)
class MachineInfo:
    torch: str
    gpus: int
    import_s: float


class Runner:
    def __init__(self, cache_dir: Path | None = None, python: str = sys.executable,
                 device: str = "auto") -> None:
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, not {device!r}")
        self.python = python
        self.device = device
        self.cache_dir = cache_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._info: MachineInfo | None = None
        self._start_lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._current: str | None = None
        self._ids = itertools.count(1)

    # -- the warm process ----------------------------------------------------------------------

    def start(self) -> MachineInfo:
        """Start the warm server if it is not running; wait until it has imported torch."""
        with self._start_lock:
            if self._proc is not None and self._proc.poll() is None and self._info is not None:
                return self._info
            # The server must import this same tutor package, installed or run from a checkout.
            env = dict(os.environ)
            package_parent = str(Path(__file__).resolve().parents[2])
            env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
            try:
                self._proc = subprocess.Popen(
                    [self.python, "-m", "tutor.runner.server"], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
            except OSError as exc:
                raise RunnerError(f"cannot start the runner: {exc}") from None
            first = self._read_message()
            if first is None or first.get("kind") != "ready":
                raise RunnerError("the runner did not start (is torch installed? try `tutor doctor`)")
            self._info = MachineInfo(first["torch"], int(first["gpus"]), float(first["import_s"]))
            return self._info

    @property
    def info(self) -> MachineInfo:
        return self.start()

    def _read_message(self) -> dict[str, Any] | None:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            return None
        return json.loads(line)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        with self._write_lock:
            try:
                self._proc.stdin.write((json.dumps(message) + "\n").encode())
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError) as exc:
                raise RunnerError(f"the runner stopped: {exc}") from None

    def close(self) -> None:
        if self._proc is not None:
            try:
                if self._proc.stdin:
                    self._proc.stdin.close()
                self._proc.wait(timeout=3)
            except (subprocess.TimeoutExpired, OSError):
                self._proc.kill()
            self._proc = None

    # -- runs ----------------------------------------------------------------------------------

    def resolve_device(self, exercise: Exercise) -> tuple[str | None, str]:
        """The device this exercise runs on here, or None with the reason it cannot run."""
        return exercise.needs.device_here(self.info.gpus, self.device)

    def request_for(self, exercise: Exercise, code: Path, seed: int | None = None,
                    device: str = "cpu") -> RunRequest:
        return RunRequest(
            exercise=exercise.key, code=str(code), solution=str(exercise.solution),
            checker=str(exercise.checker), timeout=exercise.timeout, device=device,
            processes=exercise.needs.processes,
            seed=seed if seed is not None else secrets.randbelow(2**31),
            memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB if device == "cpu" else None,
            cache_dir=str(self.cache_dir) if self.cache_dir else None)

    def check(self, exercise: Exercise, code: Path, on_event: OnEvent | None = None,
              seed: int | None = None) -> Verdict:
        """Check `code` (the learner's file or the solution) for `exercise`."""
        device, why = self.resolve_device(exercise)
        if device is None:
            return Verdict(status=SKIPPED, reason=why)
        return self.run(self.request_for(exercise, code, seed, device), on_event)

    def run_script(self, path: Path, on_event: OnEvent | None = None, timeout: float = 120) -> Verdict:
        """Run a plain Python program (a typed-along passage) on the CPU and capture its output;
        the verdict passes when it exits cleanly."""
        request = RunRequest(exercise=f"script:{path.name}", code=str(path), solution="", checker="",
                             timeout=timeout, device="cpu", seed=0,
                             memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB,
                             cache_dir=str(self.cache_dir) if self.cache_dir else None)
        return self.run(request, on_event)

    def run(self, request: RunRequest, on_event: OnEvent | None = None) -> Verdict:
        """Run one request; blocks until its verdict. One run at a time per Runner."""
        with self._run_lock:
            try:
                self.start()
            except RunnerError as exc:
                return Verdict(status=ERROR, reason=str(exc))
            run_id = f"r{next(self._ids)}"
            self._current = run_id
            try:
                self._send({"op": "run", "id": run_id, "request": request.__dict__})
                while True:
                    msg = self._read_message()
                    if msg is None:
                        self._proc = None
                        return Verdict(status=ERROR, reason="the runner process died; it will restart "
                                                            "on the next run")
                    if msg.get("id") != run_id:
                        continue  # a late message of an earlier, cancelled run
                    if msg["kind"] == "event" and on_event is not None:
                        on_event(Event(**msg["event"]))
                    elif msg["kind"] == "verdict":
                        v = msg["verdict"]
                        v.setdefault("seed", request.seed)
                        return Verdict.from_dict(v)
            except RunnerError as exc:
                self._proc = None
                return Verdict(status=ERROR, reason=str(exc))
            finally:
                self._current = None

    def cancel(self) -> bool:
        """Cancel the run in flight, if any (its verdict comes back as cancelled)."""
        run_id = self._current
        if run_id is None or self._proc is None:
            return False
        try:
            self._send({"op": "cancel", "id": run_id})
        except RunnerError:
            return False
        return True

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


__all__ = ["Runner", "RunnerError", "MachineInfo", "Verdict", "Event", "CANCELLED"]
