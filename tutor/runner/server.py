"""The warm runner: imports torch once, then forks a fresh supervisor for every run.

Talks JSON lines over stdin/stdout with `tutor.runner.client.Runner`. Forking from a process
that has imported torch (but never run an op or touched CUDA) makes a run start in
milliseconds instead of the ~1.7 s that `import torch` costs, and no state leaks between runs.

Only this process writes to the client: each supervisor sends its events and verdict through
a pipe of its own, which the server relays. The server is not dumpable and is a subreaper, so
no learner process can reach the client's pipe, and orphans of a killed run are killed here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # ask NVML, never init CUDA here
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # compile in the run's process

_out = sys.stdout.buffer
HEARTBEAT_S = 1.0  # while a run is in flight, so the client can tell a stuck server in seconds


def write(kind: str, payload: dict[str, Any]) -> None:
    _out.write((json.dumps({"kind": kind, **payload}, default=str) + "\n").encode())
    _out.flush()


def _gpu_count() -> int:
    import torch

    try:
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        return 0


class _ReferenceCache:
    """Complete reference runs, by everything that decides them (sources, seed, device, ranks,
    language): a second check of the same exercise with the same seed needs no reference
    process. Lives only in this process, which no learner process can write to."""

    LIMIT = 256 * 1024 * 1024

    def __init__(self) -> None:
        self.entries: OrderedDict[str, bytes] = OrderedDict()
        self.size = 0
        # In a run's process: the kept reference runs handed to it, by world size (a learner's
        # process clears them before its code runs, like the entries).
        self.handed: dict[int, bytes | None] = {}

    @staticmethod
    def key(request: dict[str, Any]) -> str | None:
        if not request.get("checker") or request.get("seed") is None:
            return None
        parts = [request.get(k) for k in ("exercise", "sources", "seed", "device", "processes", "lang")]
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def get(self, key: str | None) -> bytes | None:
        if key is None or key not in self.entries:
            return None
        self.entries.move_to_end(key)
        return self.entries[key]

    def put(self, key: str, data: bytes) -> None:
        if key in self.entries or len(data) > self.LIMIT // 4:
            return
        self.entries[key] = data
        self.size += len(data)
        while self.size > self.LIMIT:
            _, old = self.entries.popitem(last=False)
            self.size -= len(old)


_CACHE = _ReferenceCache()


@dataclass
class _Run:
    pid: int
    fd: int  # the supervisor's pipe to us
    tmpdir: Path
    buf: bytearray = field(default_factory=bytearray)
    stopping: float | None = None  # when SIGTERM was sent (cancel)
    answered: bool = False
    cache_keys: dict[int, str] = field(default_factory=dict)  # world size -> its reference run's key


def main() -> None:
    t0 = time.perf_counter()
    from tutor.runner import sandbox

    sandbox.make_private()
    sandbox.become_subreaper()
    # No parent-death signal here: it fires when the client *thread* that started us ends. The
    # server ends when the client closes its stdin, and the client kills it when it hangs.
    import torch  # noqa: F401 - the point of this process

    import tutor.runner.checker_api  # noqa: F401 - so runs need not import it
    from tutor.runner import build_locks, supervisor, wire  # noqa: F401

    build_locks.install()

    write(
        "ready",
        {"torch": torch.__version__, "gpus": _gpu_count(), "import_s": time.perf_counter() - t0, "pid": os.getpid()},
    )
    warm = list(_WARM_IMPORTS)
    runs: dict[str, _Run] = {}
    stdin = sys.stdin.buffer
    pending = b""
    beat = time.monotonic()
    while True:
        fds = [stdin.fileno()] + [r.fd for r in runs.values() if r.fd >= 0]
        ready, _w, _x = select.select(fds, [], [], 0.1)
        if runs and time.monotonic() - beat >= HEARTBEAT_S:
            write("alive", {})  # the client restarts a server that falls silent
            beat = time.monotonic()
        if warm and not ready and not runs:
            _warm_import(warm.pop(0))  # one at a time, only while nothing is waiting
        for run_id, run in list(runs.items()):
            if run.fd in ready:
                _relay(run_id, run)
        _reap(runs)
        if stdin.fileno() not in ready:
            continue
        chunk = os.read(stdin.fileno(), 65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            try:
                msg = json.loads(line)
                op, run_id = msg["op"], str(msg["id"])
            except (ValueError, KeyError, TypeError):
                continue  # not from the client; ignore
            if op == "run" and run_id not in runs:
                write("ack", {"id": run_id})
                runs[run_id] = _fork_run(run_id, msg.get("request") or {})
                beat = time.monotonic()
            elif op == "cancel" and run_id in runs and runs[run_id].stopping is None:
                runs[run_id].stopping = time.monotonic()
                _signal(runs[run_id].pid, signal.SIGTERM)
    for run in runs.values():
        _signal(run.pid, signal.SIGKILL)
    sandbox.kill_descendants()
    for run in runs.values():
        shutil.rmtree(run.tmpdir, ignore_errors=True)


# Modules nearly every check reaches on its first backward or compile (sympy through the
# symbolic-shapes machinery costs ~1 s per process otherwise). Imported here, after "ready" and
# only while no run is waiting, so every later fork shares them. Imports only: running an op
# here would start thread pools that do not survive fork.
_WARM_IMPORTS = (
    "torch.fx.experimental.symbolic_shapes",
    "torch.testing",
    "torch._dynamo",
    "torch._inductor.codecache",  # so each run can point its precompiled headers at the cache
)


def _warm_import(name: str) -> None:
    try:
        __import__(name)
    except Exception:
        pass


def _relay(run_id: str, run: _Run) -> None:
    """Forward the supervisor's complete lines (events, then the verdict) to the client."""
    try:
        chunk = os.read(run.fd, 1 << 20)
    except OSError:
        chunk = b""
    if not chunk:
        os.close(run.fd)
        run.fd = -1
        return
    run.buf += chunk
    while b"\n" in run.buf:
        line, _, rest = bytes(run.buf).partition(b"\n")
        run.buf = bytearray(rest)
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("kind") == "reference":
            size = msg.get("processes")
            key = run.cache_keys.get(size) if isinstance(size, int) else None
            if key is not None and isinstance(msg.get("data"), str):
                try:
                    _CACHE.put(key, base64.b64decode(msg["data"]))
                except ValueError:
                    pass
            continue  # for this process only
        if msg.get("kind") == "verdict":
            if run.stopping is not None:
                continue  # a cancelled run's late verdict: the client hears "cancelled"
            run.answered = True
        write(msg["kind"], {"id": run_id, **{k: v for k, v in msg.items() if k != "kind"}})


def _reap(runs: dict[str, _Run]) -> None:
    from tutor.runner import sandbox

    for run_id, run in list(runs.items()):
        try:
            done, status = os.waitpid(run.pid, os.WNOHANG)
        except ChildProcessError:
            done, status = run.pid, 0
        if not done:
            if run.stopping is not None and time.monotonic() - run.stopping > 2:
                _signal(run.pid, signal.SIGKILL)
            continue
        while run.fd >= 0:
            _relay(run_id, run)
        if run.stopping is not None:
            write("verdict", {"id": run_id, "verdict": {"status": "cancelled", "reason": "the run was cancelled"}})
        elif not run.answered:
            write(
                "verdict",
                {
                    "id": run_id,
                    "verdict": {
                        "status": "error",
                        "reason": f"the runner failed unexpectedly (supervisor exit status {status})",
                    },
                },
            )
        shutil.rmtree(run.tmpdir, ignore_errors=True)
        del runs[run_id]
    # Orphans of finished or killed runs are re-parented here: none may outlive its run.
    live = {r.pid for r in runs.values()}
    if any(c not in live for c in sandbox.children()):
        sandbox.kill_descendants(spare=live, deadline_s=0.5)


def _fork_run(run_id: str, request: dict[str, Any]) -> _Run:
    from tutor.runner import sandbox
    from tutor.runner.protocol import RunRequest

    tmpdir = Path(tempfile.mkdtemp(prefix="tutor-run-"))
    # One reference run per world size, each kept under the key a single-size run of that size
    # has (a check at [2, 4] and one at 2 share the 2-process reference).
    keys: dict[int, str] = {}
    for n in _world_sizes(request):
        key = _ReferenceCache.key({**request, "processes": n})
        if key is not None:
            keys[n] = key
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        return _Run(pid, r, tmpdir, cache_keys=keys)
    _CACHE.handed = {n: _CACHE.get(key) for n, key in keys.items()}
    code = 1
    try:
        os.close(r)
        os.setsid()
        sandbox.die_with_parent()
        sandbox.become_subreaper()
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)  # nothing started from here holds the client's pipe
        out = os.fdopen(w, "wb")

        def send(kind: str, payload: dict[str, Any]) -> None:
            out.write((json.dumps({"kind": kind, **payload}, default=str) + "\n").encode())
            out.flush()

        def emit(event: Any) -> None:
            send("event", {"event": event.__dict__})

        from tutor.runner import worlds

        def keep(n: int, data: bytes) -> None:
            send("reference", {"processes": n, "data": base64.b64encode(data).decode()})

        def on_term(*_: Any) -> None:  # cancel: stop the run's processes too, then go
            sandbox.kill_descendants()
            shutil.rmtree(tmpdir, ignore_errors=True)
            os._exit(143)

        signal.signal(signal.SIGTERM, on_term)
        verdict = worlds.supervise(
            RunRequest(**request), emit, tmpdir, cached=_CACHE.handed.get, store=keep if keys else None
        )
        send("verdict", {"verdict": verdict.to_dict()})
        code = 0
    except BaseException as exc:  # noqa: BLE001 - report, never hang the client
        try:
            send(
                "verdict",
                {
                    "verdict": {
                        "status": "error",  # noqa: F821 - defined above unless fdopen failed
                        "reason": f"runner error: {type(exc).__name__}: {exc}",
                    }
                },
            )
        except Exception:
            pass
        code = 0
    finally:
        os._exit(code)


def _world_sizes(request: dict[str, Any]) -> list[int]:
    """The world sizes of a request as the client sent it (tutor.runner.worlds.sizes, before
    the request is parsed: anything malformed counts as the one size `processes`)."""
    many = request.get("worlds")
    if isinstance(many, list) and len(many) > 1 and all(isinstance(n, int) for n in many):
        return many
    n = request.get("processes", 1)
    return [n if isinstance(n, int) else 1]


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    main()
