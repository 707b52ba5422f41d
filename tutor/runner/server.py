"""The warm runner: imports torch once, then forks a fresh supervisor for every run.

Talks JSON lines over stdin/stdout with `tutor.runner.client.Runner`. Forking from a process
that has imported torch (but never run an op or touched CUDA) makes a run start in
milliseconds instead of the ~1.7 s that `import torch` costs, and no state leaks between runs.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from typing import Any

os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # ask NVML, never init CUDA here
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # compile in the run's process

_out = sys.stdout.buffer


def write(kind: str, payload: dict[str, Any]) -> None:
    _out.write((json.dumps({"kind": kind, **payload}, default=str) + "\n").encode())
    _out.flush()


def _gpu_count() -> int:
    import torch

    try:
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        return 0


def main() -> None:
    t0 = time.perf_counter()
    import torch  # noqa: F401 - the point of this process

    import tutor.checking  # noqa: F401 - so runs need not import it
    from tutor.runner import supervisor

    write("ready", {"torch": torch.__version__, "gpus": _gpu_count(),
                    "import_s": time.perf_counter() - t0, "pid": os.getpid()})
    runs: dict[str, int] = {}  # run id -> supervisor pid
    stopping: dict[int, float] = {}  # supervisor pid -> when SIGTERM was sent
    stdin = sys.stdin.buffer
    pending = b""
    while True:
        ready, _, _ = select.select([stdin], [], [], 0.1)
        for run_id, pid in list(runs.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                del runs[run_id]
                cancelled = stopping.pop(pid, None) is not None
                if cancelled:
                    write("verdict", {"id": run_id, "verdict": {
                        "status": "cancelled", "reason": "the run was cancelled"}})
                elif status != 0:
                    write("verdict", {"id": run_id, "verdict": {
                        "status": "error", "reason": "the runner failed unexpectedly"}})
            elif pid in stopping and time.monotonic() - stopping[pid] > 2:
                _signal_group(pid, signal.SIGKILL)
        if not ready:
            continue
        chunk = os.read(stdin.fileno(), 65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            msg = json.loads(line)
            if msg["op"] == "run":
                runs[msg["id"]] = _fork_run(msg["id"], msg["request"], supervisor)
            elif msg["op"] == "cancel" and msg["id"] in runs:
                pid = runs[msg["id"]]
                stopping.setdefault(pid, time.monotonic())
                _signal_group(pid, signal.SIGTERM, leader_only=True)
    for pid in runs.values():
        _signal_group(pid, signal.SIGTERM, leader_only=True)


def _fork_run(run_id: str, request: dict[str, Any], supervisor: Any) -> int:
    from tutor.runner.protocol import RunRequest

    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setsid()
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)

        def emit(event: Any) -> None:
            write("event", {"id": run_id, "event": event.__dict__})

        sup = supervisor.Supervisor(RunRequest(**request), emit)
        # Cancel: stop the learner's processes too, then go.
        signal.signal(signal.SIGTERM, lambda *_: (sup._kill(), os._exit(143)))
        verdict = sup.run()
        write("verdict", {"id": run_id, "verdict": verdict.to_dict()})
        code = 0
    except BaseException as exc:  # noqa: BLE001 - report, never hang the client
        write("verdict", {"id": run_id, "verdict": {"status": "error",
                                                    "reason": f"runner error: {type(exc).__name__}: {exc}"}})
        code = 0
    finally:
        os._exit(code)


def _signal_group(pid: int, sig: int, leader_only: bool = False) -> None:
    try:
        if leader_only:
            os.kill(pid, sig)
        else:
            os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    main()
