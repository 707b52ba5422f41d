"""One run: start the learner's process (a fork, or torchrun ranks), judge what it sends, enforce
the timeout and the output cap, and turn whatever happened into a Verdict.

The supervisor never imports the learner's code, so the verdict it reaches cannot be faked by it.
"""

from __future__ import annotations

import os
import pickle
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tutor.runner import judge as judging
from tutor.runner.protocol import (CRASHED, ERROR, FAILED, OUTPUT_CAP, PASSED, TIMEOUT, Event,
                                   RunRequest, Verdict)
from tutor.runner.subject import (_HEADER, _die_with_parent, limit_memory, prepare_environment,
                                  run_subject)

Emit = Callable[[Event], None]

# Lines torch's profiler backend prints on every start/stop: noise in a learner's output.
_NOISE = re.compile(r"^USDT:[^\n]*profiler_(?:start|stop)\n?", re.MULTILINE)

_SIGNAL_NAMES = {
    signal.SIGSEGV: "SIGSEGV (segmentation fault: memory access outside what your code owns)",
    signal.SIGABRT: "SIGABRT (aborted: an assertion in native code failed)",
    signal.SIGBUS: "SIGBUS (bus error)",
    signal.SIGFPE: "SIGFPE (arithmetic error in native code)",
    signal.SIGILL: "SIGILL (illegal instruction)",
    signal.SIGKILL: "SIGKILL (killed: usually out of memory)",
}


@dataclass
class _Conn:
    sock: socket.socket
    buf: bytearray = field(default_factory=bytearray)
    rank: int = 0
    done: bool = False


class _Outcome(Exception):
    def __init__(self, status: str, reason: str, details: list[str] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.details = status, reason, details or []


class Supervisor:
    def __init__(self, request: RunRequest, emit: Emit) -> None:
        self.request = request
        self.emit = emit
        self.start = time.monotonic()
        self.tmpdir = Path(tempfile.mkdtemp(prefix="tutor-run-"))
        self.figures: dict[str, Any] = {}
        self.output = bytearray()
        self.output_total = 0
        self.pid: int | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.exit_status: int | None = None
        self.expected_ranks = max(1, request.processes)
        self.ranks_done = 0

    # -- starting the learner's process --------------------------------------------------------

    def _spawn(self, sock_path: str, out_w: int) -> None:
        if self.request.processes > 1:
            env = dict(os.environ, TUTOR_REQUEST=self.request.to_json(), TUTOR_SOCKET=sock_path,
                       TUTOR_TMPDIR=str(self.tmpdir), OMP_NUM_THREADS="1")
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   f"--nproc-per-node={self.request.processes}", "-m", "tutor.runner.subject"]
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w,
                                         env=env, cwd=self.tmpdir, start_new_session=True)
            return
        pid = os.fork()
        if pid == 0:  # the learner's process
            try:
                os.setpgid(0, 0)
                _die_with_parent()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                if self.request.device == "cpu":
                    limit_memory(self.request.memory_limit_mb)
                prepare_environment(self.request, self.tmpdir)
                run_subject(self.request, sock_path, self.tmpdir)
            finally:
                os._exit(70)
        self.pid = pid

    def _kill(self) -> None:
        for pgid in (self.pid, self.proc.pid if self.proc else None):
            if pgid:
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def _reap(self) -> bool:
        """True once the learner's process has exited (its status kept in exit_status)."""
        if self.exit_status is not None:
            return True
        if self.proc is not None:
            code = self.proc.poll()
            if code is not None:
                self.exit_status = code
        elif self.pid is not None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exit_status = status
        return self.exit_status is not None

    # -- the loop ------------------------------------------------------------------------------

    def run(self) -> Verdict:
        sock_path = str(self.tmpdir / "channel.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(sock_path)
        listener.listen(8)
        out_r, out_w = os.pipe()
        try:
            self._spawn(sock_path, out_w)
            os.close(out_w)
            outcome = self._loop(listener, out_r)
        except _Outcome as o:
            outcome = o
        finally:
            self._kill()
            self._drain(out_r)
            os.close(out_r)
            listener.close()
            if self.pid is not None and self.exit_status is None:
                try:
                    os.waitpid(self.pid, 0)
                except ChildProcessError:
                    pass
            if self.proc is not None:
                self.proc.wait()
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        text = _NOISE.sub("", bytes(self.output).decode("utf-8", errors="replace"))
        return Verdict(status=outcome.status, reason=outcome.reason, details=outcome.details,
                       figures=self.figures, output=text,
                       output_truncated=self.output_total > len(self.output),
                       duration_s=time.monotonic() - self.start, seed=self.request.seed)

    def _drain(self, fd: int) -> None:
        os.set_blocking(fd, False)
        try:
            while chunk := os.read(fd, 65536):
                self._take_output(chunk)
        except (BlockingIOError, OSError):
            pass

    def _loop(self, listener: socket.socket, out_r: int) -> _Outcome:
        sel = selectors.DefaultSelector()
        sel.register(listener, selectors.EVENT_READ, "accept")
        sel.register(out_r, selectors.EVENT_READ, "output")
        deadline = self.start + self.request.timeout
        conns: list[_Conn] = []
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if now > deadline:
                raise _Outcome(TIMEOUT, f"your code did not finish within {self.request.timeout:g} s "
                                        "(an endless loop, or far too slow); it was stopped")
            for key, _ in sel.select(timeout=0.05):
                if key.data == "accept":
                    s, _ = listener.accept()
                    conn = _Conn(s)
                    conns.append(conn)
                    sel.register(s, selectors.EVENT_READ, conn)
                elif key.data == "output":
                    chunk = os.read(out_r, 65536)
                    if chunk:
                        self._take_output(chunk)
                    else:
                        sel.unregister(out_r)
                else:
                    self._read(key.data, sel)
            if self.ranks_done >= self.expected_ranks:
                return _Outcome(PASSED, "all checks passed" if self.request.checker
                                else "the program ran to the end")
            if self._reap():
                # Let the last messages arrive before deciding.
                exited_at = exited_at or now
                settled = not any(isinstance(k.data, _Conn) for k in sel.get_map().values())
                if settled or now - exited_at > 0.3:
                    return self._exited()

    def _exited(self) -> _Outcome:
        status = self.exit_status or 0
        if self.proc is not None:  # torchrun: a rank failed without reporting
            return _Outcome(ERROR, f"a process of the distributed run failed (torchrun exit code {status}); "
                                   "see the output below")
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = _SIGNAL_NAMES.get(sig, signal.Signals(sig).name if sig in signal.Signals._value2member_map_
                                     else f"signal {sig}")
            return _Outcome(CRASHED, f"your code crashed the process with {name}")
        code = os.WEXITSTATUS(status)
        return _Outcome(ERROR, f"your program exited (exit code {code}) before the check finished")

    def _take_output(self, chunk: bytes) -> None:
        self.output_total += len(chunk)
        room = OUTPUT_CAP - len(self.output)
        if room > 0:
            piece = chunk[:room]
            self.output += piece
            self.emit(Event("output", piece.decode("utf-8", errors="replace"), self._elapsed()))

    def _elapsed(self) -> float:
        return time.monotonic() - self.start

    def _read(self, conn: _Conn, sel: selectors.BaseSelector) -> None:
        try:
            chunk = conn.sock.recv(1 << 20)
        except ConnectionError:
            chunk = b""
        if not chunk:
            sel.unregister(conn.sock)
            conn.sock.close()
            return
        conn.buf += chunk
        while len(conn.buf) >= _HEADER.size:
            (n,) = _HEADER.unpack_from(conn.buf)
            if len(conn.buf) < _HEADER.size + n:
                break
            data = bytes(conn.buf[_HEADER.size:_HEADER.size + n])
            del conn.buf[:_HEADER.size + n]
            self._handle(conn, pickle.loads(data))

    def _prefix(self, conn: _Conn) -> str:
        return f"rank {conn.rank}: " if self.expected_ranks > 1 else ""

    def _handle(self, conn: _Conn, msg: tuple[Any, ...]) -> None:
        kind = msg[0]
        if kind == "hello":
            conn.rank = msg[1]
        elif kind == "phase":
            if conn.rank == 0:
                self.emit(Event("phase", msg[1], self._elapsed(), msg[2]))
        elif kind == "figure":
            if conn.rank == 0:
                self.figures[msg[1]] = msg[2]
                self.emit(Event("figure", msg[1], self._elapsed(), {"value": msg[2]}))
        elif kind == "expect":
            _, what, name, actual, expected, options = msg
            failure = judging.judge(what, name, actual, expected, options)
            if failure:
                conn.sock.sendall(b"-")
                raise _Outcome(FAILED, self._prefix(conn) + failure[0], failure[1])
            conn.sock.sendall(b"+")
        elif kind == "failed":
            raise _Outcome(FAILED, self._prefix(conn) + msg[1], list(msg[2]))
        elif kind == "error":
            raise _Outcome(ERROR, self._prefix(conn) + msg[1], list(msg[2]))
        elif kind == "exit":
            raise _Outcome(ERROR, self._prefix(conn) + f"your code called sys.exit({msg[1]!r}) "
                                                       "before the check finished")
        elif kind == "done":
            conn.done = True
            self.ranks_done += 1


def supervise(request: RunRequest, emit: Emit) -> Verdict:
    return Supervisor(request, emit).run()
