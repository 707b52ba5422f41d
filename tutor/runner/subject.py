"""A checked process: runs the checker once, in one of two roles, and reports over its channel.

- role "learner": `ctx.learner` is the learner's module. Every observation (`ctx.expect_*`)
  sends only the learner's side (the actual value); expected values never leave this process.
- role "reference": `ctx.learner` is the reference solution, in a process that never imports
  the learner's code. Its observations carry the expected values the judge compares with.

The judge pairs the two runs' observations in order, so patching torch, the checker or the
channel in the learner's process can only change the learner's own numbers.

Runs forked from the supervisor (one process per role) or as torchrun ranks.
"""

from __future__ import annotations

import ctypes
import io
import os
import resource
import socket
import sys
import tempfile
import traceback
import types
from pathlib import Path
from typing import Any, Callable

from tutor.runner.checker_api import Channel
from tutor.i18n import _
from tutor.runner import prelude_pch, sandbox, wire
from tutor.runner.protocol import RunRequest

LEARNER = "learner"
REFERENCE = "reference"


class SocketChannel(Channel):
    """The checking API's channel. Sends never wait for an answer: the judge decides alone and
    stops this process when it has seen enough."""

    def __init__(self, sock: socket.socket, role: str) -> None:
        self._send = _sender(sock)
        self.role = role
        self._sock = sock

    # The learner's side never carries expected values; the reference's never carries actuals.
    def expect(self, kind: str, name: str, actual: Any, expected: Any, options: dict[str, Any]) -> None:
        value = actual if self.role == LEARNER else (expected if kind in ("close", "equal", "left") else None)
        self._send(("obs", kind, name, value, options if self.role == REFERENCE else {}))

    def figure(self, name: str, value: Any) -> None:
        if self.role == LEARNER:
            self._send(("figure", name, value))

    def phase(self, text: str, **info: Any) -> None:
        if self.role == LEARNER:
            self._send(("phase", text, info))

    @property
    def measures_speed(self) -> bool:
        """Only the learner's run times code; the reference run's figures would be discarded."""
        return self.role == LEARNER

    def quiet(self) -> None:
        """Block until the reference run has finished, so timing does not share the CPU with it."""
        if self.role != LEARNER:
            return
        self._send(("quiet?",))
        try:
            self._sock.recv(1)
        except OSError:
            pass


def _sender(sock: socket.socket) -> Any:
    encode, sendall = wire.encode, sock.sendall  # bound now: wrapping wire.encode later changes nothing

    def send(message: tuple[Any, ...]) -> None:
        sendall(encode(message))

    return send


def import_source(name: str, path: Path, source: bytes | str) -> types.ModuleType:
    """A module compiled from `source` (never a cached .pyc): the code checked is the code
    given, whatever `__pycache__` holds. Bytes honour a PEP 263 coding line."""
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    code = compile(source, str(path), "exec", dont_inherit=True)
    exec(code, module.__dict__)
    return module


class _SourceFinder:
    """Serves a chapter's shared checker helpers (checks/_common.py) from the copies the run
    was given, not from disk."""

    def __init__(self, modules: dict[str, tuple[str, str]]) -> None:
        self.modules = modules

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        import importlib.util

        if name not in self.modules:
            return None
        return importlib.util.spec_from_loader(name, self)  # type: ignore[arg-type]

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        file, source = self.modules[module.__name__]
        module.__file__ = file
        exec(compile(source, file, "exec", dont_inherit=True), module.__dict__)


def learner_frames(exc: BaseException, learner: Path) -> list[str]:
    """The traceback lines that point into the learner's file (else the innermost frame)."""
    tb = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in tb if _same_file(f.filename, learner)]
    frames = mine or tb[-1:]
    lines: list[str] = []
    for f in frames:
        where = "your code" if f in mine else Path(f.filename).name
        lines.append(f"{where}, line {f.lineno}, in {f.name}")
        if f.line:
            lines.append(f"    {f.line.strip()}")
    return lines


def _same_file(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except OSError:
        return False


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


def prepare_environment(request: RunRequest, tmpdir: Path) -> None:
    """Caches shared across runs (builds are reused), everything else in the run's tmpdir."""
    cache = Path(request.cache_dir) if request.cache_dir else tmpdir / "cache"
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(cache / "torch_extensions"))
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache / "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(cache / "triton"))
    if not request.checker:
        # A passage compiles one small graph: Inductor's pool of compile workers (a fresh
        # interpreter that imports torch) costs more than it saves. Measured on 2 busy cores
        # (bench/bench_compile.py): a cold first call 29 CPU-s with the pool, 22 s without.
        os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    os.environ["TMPDIR"] = str(tmpdir)
    # The server (and so this fork) already asked tempfile for its folder: without this,
    # learner code's tempfile calls and Inductor's default folders would land in /tmp.
    tempfile.tempdir = str(tmpdir)

    def headers_in_cache(codecache: types.ModuleType) -> None:
        # Fixed at import, from the temp folder: Inductor's precompiled headers (about
        # 150 MiB) belong with the other caches, kept between checks.
        codecache._HEADER_DIR = str(cache / "inductor" / "precompiled_headers")  # type: ignore[attr-defined]

    after_import("torch._inductor.codecache", headers_in_cache)
    # C++ extensions: the learner's #include lines precompiled once (prelude_pch.py). Set here,
    # before learner code runs, so the call contract does not see the variable appear.
    os.environ.setdefault("CCACHE_SLOPPINESS", prelude_pch.CCACHE_SLOPPINESS)
    after_import("torch.utils.cpp_extension", prelude_pch.patch)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True
    os.chdir(tmpdir)


class _AfterImport:
    """Runs `hook(module)` right after `name` is imported in this process (at once if it
    already is): for torch modules the warm server may or may not have imported before the
    fork, without importing them here when the check never needs them."""

    def __init__(self, name: str, hook: Callable[[types.ModuleType], None]) -> None:
        self.name, self.hook = name, hook

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run, hook = loader.exec_module, self.hook

        def exec_module(module: types.ModuleType) -> None:
            run(module)
            hook(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        sys.meta_path.remove(self)
        return spec


def after_import(name: str, hook: Callable[[types.ModuleType], None]) -> None:
    module = sys.modules.get(name)
    if module is not None:
        hook(module)
    else:
        sys.meta_path.insert(0, _AfterImport(name, hook))


def unbuffered_stdio() -> None:
    """print() reaches the pipe at once: nothing is lost when the process is stopped or exits
    early, whether or not PYTHONUNBUFFERED is set in the learner's shell."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        raw = io.FileIO(fd, "w", closefd=False)
        stream = io.TextIOWrapper(
            raw, encoding="utf-8", errors="backslashreplace", write_through=True, line_buffering=False
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def flush_all() -> None:
    """Python's and C's stdio buffers, before any exit (os._exit skips both)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    try:
        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass


def run_subject(
    request: RunRequest, sock: socket.socket, tmpdir: Path, role: str, rank: int = 0, world_size: int = 1
) -> None:
    """Run the check (or the plain program) and report; never returns (exits the process)."""
    channel = SocketChannel(sock, role)
    send = channel._send
    learner_path = Path(request.code)
    sources = request.sources or {}
    code = 0
    try:
        import torch

        from tutor.runner import checker_api as checking

        torch.manual_seed(request.seed or 0)
        if not request.checker:
            # A plain program (a finished type-along passage): its output is the result.
            module = types.ModuleType("__main__")
            module.__file__ = str(learner_path)
            sys.modules["__main__"] = module
            exec(compile(learner_path.read_bytes(), str(learner_path), "exec", dont_inherit=True), module.__dict__)
            flush_all()
            send(("done",))
            os._exit(0)
        helpers = {name: (file, text) for name, (file, text) in (sources.get("helpers") or {}).items()}
        sys.meta_path.insert(0, _SourceFinder(helpers))
        checker = import_source("tutor_checker", Path(request.checker), sources["checker"])
        solution_src = sources["solution"]

        def load_reference() -> types.ModuleType:
            return import_source("reference_solution", Path(request.solution), solution_src)

        def load_learner() -> types.ModuleType:
            if role == REFERENCE:
                return load_reference()
            return import_source("learner_solution", learner_path, learner_path.read_bytes())

        ctx = checking.Context(
            learner=None,
            reference=None,
            channel=channel,
            seed=request.seed or 0,
            device=request.device,
            tmpdir=tmpdir,
            learner_path=learner_path,
            rank=rank,
            world_size=world_size,
            learner_loader=load_learner,
            reference_loader=load_reference,
            reasons=sources.get("reasons") or {},
            allows=tuple(sources.get("allows") or ()),
            guarded=[checker, *(sys.modules[n] for n in helpers if isinstance(sys.modules.get(n), types.ModuleType))],
        )
        tripwire = ctx._tampered  # taken before any learner code runs
        _announce_compiles(send)
        checker.check(ctx)
        ctx.finish()
        tampered = tripwire()
        flush_all()
        if tampered:
            send(
                (
                    "failed",
                    _(
                        "your code replaced part of the checker ({what}); the check cannot trust this run",
                        what=tampered,
                    ),
                    [],
                )
            )
        else:
            send(("done",))
    except BaseException as exc:  # noqa: BLE001 - everything the learner raises is reported
        from tutor.runner.checker_api import CheckFailed

        flush_all()
        try:
            if isinstance(exc, CheckFailed):
                send(("failed", exc.reason, exc.details))
            elif isinstance(exc, SystemExit):
                send(("exit", _exit_code(exc.code)))
            elif isinstance(exc, (ConnectionError, BrokenPipeError)):
                code = 4
            else:
                summary = _summary(exc)
                send(("error", summary, learner_frames(exc, learner_path)))
        except Exception:
            code = 5
    flush_all()
    os._exit(code)


def _announce_compiles(send: Any) -> None:
    """Tell the judge when torch.compile first starts compiling here: the run then gets the
    time a cold compile needs, and the learner sees why it takes long."""
    said: list[bool] = []

    def started(*_args: Any) -> None:
        if not said:
            said.append(True)
            try:
                send(("compiling",))
            except OSError:
                pass

    def register(callback: types.ModuleType) -> None:
        try:
            callback.callback_handler.register_start_callback(started)
        except AttributeError:
            pass  # a torch without compile callbacks: the exercise's own limit stands

    after_import("torch._dynamo.callback", register)


def _exit_code(value: Any) -> Any:
    return value if value is None or isinstance(value, (int, str)) else repr(value)


def _summary(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return _("MemoryError: your code ran out of memory (the run's memory cap was reached)")
    try:
        text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    except Exception:
        text = type(exc).__name__
    return text if len(text) <= 2000 else text[:1999] + "…"


def _isolate(role: str) -> None:
    """The reference's process cannot be reached into by the learner's; the learner's cannot
    trace anyone, nor call the tutor's own bookkeeping from a check."""
    if role == REFERENCE:
        sandbox.make_private()
    else:
        sandbox.drop_ptrace()
        for name in ("tutor.progress", "tutor.workspace", "tutor.session", "tutor.cli"):
            sys.modules[name] = None  # type: ignore[assignment]


def _default_signals() -> None:
    """SIGTERM and SIGINT kill again (the warm server forked us with its own handlers)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_isolated(request: RunRequest, sock: socket.socket, tmpdir: Path, role: str, rank: int, world: int) -> None:
    """The memory cap, unbuffered output and the run's environment, then the check itself."""
    if request.device == "cpu":
        limit_memory(request.memory_limit_mb)
    unbuffered_stdio()
    prepare_environment(request, tmpdir)
    run_subject(request, sock, tmpdir, role, rank, world)


def start_child(request: RunRequest, sock: socket.socket, tmpdir: Path, role: str) -> None:
    """In a freshly forked child: isolate, then run. Never returns."""
    try:
        os.setpgid(0, 0)
        sandbox.die_with_parent()
        _isolate(role)
        _default_signals()
        sandbox.close_fds_except({sock.fileno()})
        _run_isolated(request, sock, tmpdir, role, 0, 1)
    finally:
        os._exit(70)


def main() -> None:
    """Entry point for torchrun ranks: `python -m tutor.runner.subject`."""
    role = os.environ.pop("TUTOR_ROLE", LEARNER)
    token = os.environ.pop("TUTOR_TOKEN", "")
    sock_path = os.environ.pop("TUTOR_SOCKET")
    request = RunRequest.from_json(os.environ.pop("TUTOR_REQUEST"))
    tmpdir = Path(os.environ["TUTOR_TMPDIR"])
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    run_rank(request, role, token, sock_path, tmpdir, rank, world)


def run_rank(request: RunRequest, role: str, token: str, sock_path: str, tmpdir: Path, rank: int, world: int) -> None:
    """One rank of a distributed check: isolate, say hello on the judge's socket, run."""
    _isolate(role)
    sandbox.die_with_parent()  # the launcher's death must not leave ranks running
    rank_dir = tmpdir / f"{role}-rank{rank}"
    rank_dir.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sock_path)
    sock.sendall(wire.encode(("hello", token, rank)))
    _run_isolated(request, sock, rank_dir, role, rank, world)


def launch_ranks(request: RunRequest, role: str, token: str, sock_path: str, tmpdir: Path, world: int) -> None:
    """In a freshly forked child of the (torch-imported) supervisor: start `world` ranks as
    torchrun would, each forked from here, so no rank starts an interpreter or imports torch
    again. Like torchrun's agent, this process hosts the ranks' TCPStore on a port the kernel
    picks (no port can collide with another run's) and gives it to the ranks in torchrun's
    environment variables; it waits like torchrun too: the first rank that fails takes the
    others down, and this process exits 1; 0 when all succeed. Never returns."""
    code = 70
    try:
        os.setsid()
        sandbox.die_with_parent()
        sandbox.close_fds_except(set())  # nothing of the supervisor's: no other run's sockets
        _default_signals()
        pids, pipes = [], []
        for rank in range(world):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # a rank: wait for the store's port (forked before the store's threads exist)
                try:
                    os.close(write)
                    port = os.read(read, 16).decode().strip()
                    os.close(read)
                    if not port:
                        os._exit(71)
                    os.environ.update(
                        MASTER_ADDR="127.0.0.1",
                        MASTER_PORT=port,
                        TORCHELASTIC_USE_AGENT_STORE="True",
                        WORLD_SIZE=str(world),
                        LOCAL_WORLD_SIZE=str(world),
                        GROUP_RANK="0",
                        GROUP_WORLD_SIZE="1",
                        ROLE_WORLD_SIZE=str(world),
                        OMP_NUM_THREADS="1",
                        RANK=str(rank),
                        LOCAL_RANK=str(rank),
                        ROLE_RANK=str(rank),
                    )
                    run_rank(request, role, token, sock_path, tmpdir, rank, world)
                finally:
                    os._exit(70)
            os.close(read)
            pids.append(pid)
            pipes.append(write)
        from torch.distributed import TCPStore  # type: ignore[attr-defined]

        store = TCPStore("127.0.0.1", 0, world, is_master=True, wait_for_workers=False)
        for write in pipes:
            os.write(write, str(store.port).encode())
            os.close(write)
        code = _wait_ranks(pids)
    finally:
        os._exit(code)


def _wait_ranks(pids: list[int]) -> int:
    """0 once every rank exited 0; else 1 as soon as one fails (the rest are killed)."""
    import signal

    left = set(pids)
    while left:
        pid, status = os.wait()
        if pid not in left:
            continue
        left.discard(pid)
        if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            for other in left:
                try:
                    os.kill(other, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for other in left:
                try:
                    os.waitpid(other, 0)
                except ChildProcessError:
                    pass
            return 1
    return 0


if __name__ == "__main__":
    main()


__all__ = ["LEARNER", "REFERENCE", "launch_ranks", "main", "run_rank", "run_subject", "start_child"]
