"""One run: start the checked processes, judge what they send, enforce the deadline and the
output cap, and turn whatever happened into a Verdict.

A check runs twice with the same seed: the reference run (the reference solution in the
learner's place, in a process that never sees the learner's code) and the learner's run. The
judge pairs their observations in order, per rank: same kind, same name, the learner's value
against the reference run's expected value. A run passes only when every rank of the learner's
run made exactly the observations the reference run made, all matched, and it ended cleanly.

The supervisor never imports the learner's code; it is a child subreaper, so every process the
run starts stays its descendant and is killed before the verdict leaves.
"""

from __future__ import annotations

import os
import re
import secrets
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

from tutor import i18n
from tutor.i18n import N_, _
from tutor.runner import judge as judging
from tutor.runner import phases, sandbox, wire
from tutor.runner.protocol import CRASHED, ERROR, FAILED, OUTPUT_CAP, PASSED, TIMEOUT, Event, RunRequest, Verdict
from tutor.runner.subject import LEARNER, REFERENCE, launch_ranks, start_child

Emit = Callable[[Event], None]

# Lines torch's profiler backend prints on every start/stop: noise in a learner's output.
_NOISE = re.compile(r"^USDT:[^\n]*profiler_(?:start|stop)\n?", re.MULTILINE)
_BACKLOG = 64  # observations waiting for their pair before we stop reading that side
# Added to a run's time limit once torch.compile starts in it: a cold first check of sigmoid
# whose backward calls a compiled function took 85 s on an idle 2-core machine and 96 s at a
# load of 7.5 (26 s warm); the limit leaves room for twice that.
COMPILE_EXTRA_S = 180.0

_SIGNAL_NAMES = {
    signal.SIGSEGV: N_("SIGSEGV (segmentation fault: memory access outside what your code owns)"),
    signal.SIGABRT: N_("SIGABRT (aborted: an assertion in native code failed)"),
    signal.SIGBUS: N_("SIGBUS (bus error)"),
    signal.SIGFPE: N_("SIGFPE (arithmetic error in native code)"),
    signal.SIGILL: N_("SIGILL (illegal instruction)"),
    signal.SIGKILL: N_("SIGKILL (killed: usually out of memory)"),
}


class _Outcome(Exception):
    def __init__(self, status: str, reason: str, details: list[str] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.details = status, reason, details or []


@dataclass
class _Side:
    """One rank of one role: its connection and what it has said."""

    role: str
    rank: int
    sock: socket.socket | None = None
    reader: wire.Reader = field(default_factory=lambda: wire.Reader())
    obs: list[tuple[Any, ...]] = field(default_factory=list)
    end: tuple[Any, ...] | None = None  # ("done",) | ("failed", ...) | ("error", ...) | ("exit", ...)
    closed: bool = False
    wants_quiet: bool = False


def _stdio(out_fd: int) -> None:
    """In a forked child: no input, and stdout and stderr into the run's output pipe."""
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)


class Supervisor:
    def __init__(
        self,
        request: RunRequest,
        emit: Emit,
        tmpdir: Path,
        cached_reference: bytes | None = None,
        store_reference: Callable[[bytes], None] | None = None,
    ) -> None:
        self.request = request
        # The reference run's observations for these exact sources, seed, device and language,
        # kept by the warm server from an earlier run: no reference process is needed then.
        self.cached_reference = cached_reference
        self.store_reference = store_reference
        i18n.set_language(request.lang)  # reasons in the learner's language
        self.emit = emit
        self.start = time.monotonic()
        self.timeout = request.timeout  # grows once, when a compile starts
        self.tmpdir = tmpdir
        self.figures: dict[str, Any] = {}
        self.output = bytearray()
        self.output_total = 0
        self.ranks = max(1, request.processes)
        self.checked = bool(request.checker)
        roles = (REFERENCE, LEARNER) if self.checked else (LEARNER,)
        self.sides = {(role, r): _Side(role, r) for role in roles for r in range(self.ranks)}
        self.compared = [0] * self.ranks
        self.pids: dict[str, int] = {}  # role -> forked process or torchrun pid
        self.status: dict[str, int] = {}  # role -> wait status once it exited
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.tokens = {role: secrets.token_hex(16) for role in roles}
        self.role_dirs: dict[str, Path] = {}
        self._ref_looked = 0.0
        self._ref_stopped_at: float | None = None
        self.sel = selectors.DefaultSelector()
        self.listener: socket.socket | None = None

    # -- starting the checked processes --------------------------------------------------------

    def _role_dir(self, role: str) -> Path:
        """Each role's own folder. The reference's is not beside the learner's (whose code
        could otherwise wait for the reference run's saved files and copy them): a fresh
        temporary folder whose name only the supervisor and the reference run know, removed
        as soon as the reference run ends."""
        if role not in self.role_dirs:
            if role == REFERENCE:
                self.role_dirs[role] = Path(tempfile.mkdtemp())
            else:
                self.role_dirs[role] = self.tmpdir / role
                self.role_dirs[role].mkdir(exist_ok=True)
        return self.role_dirs[role]

    def _drop_reference_dir(self) -> None:
        where = self.role_dirs.pop(REFERENCE, None)
        if where is not None:
            shutil.rmtree(where, ignore_errors=True)

    def _forget(self, role: str) -> None:
        """In a freshly forked child, before any checked code runs: nothing of the other role
        stays in this memory (the reference run's cached results, its folder and token), nor
        the server's cache of earlier reference runs."""
        if role == LEARNER:
            self.cached_reference = None
            self.role_dirs.pop(REFERENCE, None)
            self.tokens.pop(REFERENCE, None)
            self.pids.pop(REFERENCE, None)
            self.sides = {k: v for k, v in self.sides.items() if k[0] == LEARNER}
            server = sys.modules.get("tutor.runner.server")
            cache = getattr(server, "_CACHE", None)
            if cache is not None:
                cache.entries.clear()
                cache.size = 0
                getattr(cache, "handed", {}).clear()

    def _fork(self, role: str, out_fd: int) -> None:
        parent, child = socket.socketpair()
        role_dir = self._role_dir(role)
        pid = os.fork()
        if pid == 0:
            try:
                parent.close()
                _stdio(out_fd)
                self._forget(role)
                start_child(self.request, child, role_dir, role)
            finally:
                os._exit(70)
        child.close()
        self.pids[role] = pid
        self._attach(self.sides[(role, 0)], parent)

    def _attach(self, side: _Side, sock: socket.socket) -> None:
        sock.setblocking(False)
        side.sock = sock
        self.sel.register(sock, selectors.EVENT_READ, side)

    def _listen(self) -> str:
        """The judge's socket that distributed ranks say hello on (made once per run)."""
        if self.listener is None:
            ctl = self.tmpdir / ".ctl"
            ctl.mkdir(mode=0o700)
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(str(ctl / "judge.sock"))
            self.listener.listen(16)
            self.listener.setblocking(False)
            self.sel.register(self.listener, selectors.EVENT_READ, "accept")
        return str(self.tmpdir / ".ctl" / "judge.sock")

    def _ranks(self, role: str, out_fd: int) -> None:
        """A CPU distributed run's ranks, forked from this process (torch already imported)
        under one launcher per role that stands where torchrun would: a check saves a Python
        start and a torch import per rank, and per role the launcher's own."""
        sock_path = self._listen()
        role_dir, token = self._role_dir(role), self.tokens[role]
        pid = os.fork()
        if pid == 0:
            try:
                _stdio(out_fd)
                self._forget(role)
                os.chdir(role_dir)
                launch_ranks(self.request, role, token, sock_path, role_dir, self.ranks)
            finally:
                os._exit(70)
        self.pids[role] = pid

    def _torchrun(self, role: str, out_fd: int) -> None:
        self._listen()
        env = dict(
            os.environ,
            TUTOR_REQUEST=self.request.to_json(),
            TUTOR_SOCKET=str(self.tmpdir / ".ctl" / "judge.sock"),
            TUTOR_TOKEN=self.tokens[role],
            TUTOR_ROLE=role,
            TUTOR_TMPDIR=str(self._role_dir(role)),
            OMP_NUM_THREADS="1",
        )
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc-per-node={self.ranks}",
            "-m",
            "tutor.runner.subject",
        ]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out_fd,
            stderr=out_fd,
            env=env,
            cwd=self._role_dir(role),
            start_new_session=True,
            preexec_fn=sandbox.die_with_parent,
        )
        self.procs[role] = proc
        self.pids[role] = proc.pid

    def _use_cached_reference(self) -> bool:
        if not (self.checked and self.cached_reference):
            return False
        try:
            ranks = wire.decode(self.cached_reference)
        except wire.WireError:
            return False
        if not (isinstance(ranks, list) and len(ranks) == self.ranks):
            return False
        for r, obs in enumerate(ranks):
            side = self.sides[(REFERENCE, r)]
            side.obs = list(obs)
            side.end = ("done",)
        return True

    def _keep_reference(self) -> None:
        """Hand a complete reference run to the server for the next run with the same key."""
        if self.store_reference is None or self.cached_reference:
            return
        refs = [self.sides[(REFERENCE, r)] for r in range(self.ranks)]
        if all(s.end is not None and s.end[0] == "done" for s in refs):
            try:
                self.store_reference(wire.encode([list(s.obs) for s in refs]))
            except Exception:
                pass  # a cache, never a reason to fail a run

    def _spawn(self, out_w: int) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        cached = self._use_cached_reference()
        try:
            if self.ranks == 1:
                if self.checked and not cached:
                    self._fork(REFERENCE, devnull)
                self._fork(LEARNER, out_w)
                return
            # torchrun where CUDA is in play (each rank initialises its own GPU in a fresh
            # interpreter); forked ranks on the CPU.
            launch = self._torchrun if self.request.device == "cuda" else self._ranks
            if self.checked and not cached:
                # Every reference rank connects before any learner process exists: a learner
                # rank can then never pose as one.
                self.emit(phases.launching(REFERENCE, self.ranks, self._elapsed()))
                launch(REFERENCE, devnull)
                self._wait_for(REFERENCE)
            self.emit(phases.launching(LEARNER, self.ranks, self._elapsed()))
            launch(LEARNER, out_w)
        finally:
            os.close(devnull)

    def _wait_for(self, role: str) -> None:
        while not all(self.sides[(role, r)].sock is not None for r in range(self.ranks)):
            self._check_deadline()
            for key, _events in self.sel.select(timeout=0.05):
                if key.data == "accept":
                    self._accept()
                elif isinstance(key.data, _Side):
                    self._read(key.data)
            self._reap()
            if role in self.status:
                raise self._ref_broken("its processes exited before connecting")

    def _accept(self) -> None:
        assert self.listener is not None
        try:
            sock, _addr = self.listener.accept()
        except BlockingIOError:
            return
        sock.settimeout(2.0)
        try:
            reader = wire.Reader(max_frame=4096)
            hello: list[Any] = []
            while not hello:
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError
                hello = reader.feed(chunk)
            kind, token, rank = hello[0]
        except (OSError, ValueError, TypeError, wire.WireError, ConnectionError):
            sock.close()
            return
        role = next((r for r, t in self.tokens.items() if secrets.compare_digest(str(token), t)), None)
        side = self.sides.get((role, rank)) if role and kind == "hello" and isinstance(rank, int) else None
        if side is None or side.sock is not None:
            sock.close()
            if side is not None:
                raise _Outcome(
                    FAILED,
                    _(
                        "rank {rank} opened a second connection to the judge; the check cannot trust this run",
                        rank=rank,
                    ),
                )
            return
        side.reader.feed(bytes(reader.buf))  # anything sent right after the hello
        self._attach(side, sock)

    def _kill(self) -> None:
        sandbox.kill_descendants()

    def _reap(self) -> None:
        for role, pid in self.pids.items():
            if role in self.status:
                continue
            proc = self.procs.get(role)
            if proc is not None:
                code = proc.poll()
                if code is not None:
                    self.status[role] = code
                continue
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                self.status[role] = 0
                continue
            if done:
                self.status[role] = status
        if REFERENCE in self.status:
            self._drop_reference_dir()  # its files are gone before the learner's run can look
        # Orphans re-parented to us (a learner's double fork): collect their exit, never block.
        sandbox.reap_all(spare=set(self.pids.values()))

    # -- the loop ------------------------------------------------------------------------------

    def run(self) -> Verdict:
        out_r, out_w = os.pipe()
        try:
            try:
                self._spawn(out_w)
                os.close(out_w)
                out_w = -1
                outcome = self._loop(out_r)
            finally:
                if out_w >= 0:
                    os.close(out_w)
        except _Outcome as o:
            outcome = o
        finally:
            self._kill()
            self._drop_reference_dir()
            if self.checked:
                self._keep_reference()
            self._drain(out_r)
            os.close(out_r)
            for side in self.sides.values():
                if side.sock is not None:
                    side.sock.close()
            if self.listener is not None:
                self.listener.close()
        text = _NOISE.sub("", bytes(self.output).decode("utf-8", errors="replace"))
        return Verdict(
            status=outcome.status,
            reason=outcome.reason,
            details=outcome.details,
            figures=self.figures,
            output=text,
            output_truncated=self.output_total > len(self.output),
            duration_s=time.monotonic() - self.start,
            seed=self.request.seed,
        )

    def _drain(self, fd: int) -> None:
        """Everything still in the output pipe (every writer is dead by now)."""
        os.set_blocking(fd, False)
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                time.sleep(0.005)
                if not sandbox.children():
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:
                        return
                else:
                    continue
            except OSError:
                return
            if not chunk:
                return
            self._take_output(chunk)

    def _check_deadline(self) -> None:
        if time.monotonic() - self.start > self.timeout:
            learner_done = all(self.sides[(LEARNER, r)].end for r in range(self.ranks))
            if learner_done and self.checked:
                if REFERENCE in self.pids and sandbox.stopped(self.pids[REFERENCE]):
                    raise self._ref_interrupted(_("stopped by SIGSTOP"))
                raise _Outcome(
                    TIMEOUT,
                    _(
                        "the reference run did not finish within {timeout:g} s "
                        "(the machine may be very busy); try again",
                        timeout=self.timeout,
                    ),
                )
            raise _Outcome(
                TIMEOUT,
                _(
                    "your code did not finish within {timeout:g} s (an endless loop, or far too slow); it was stopped",
                    timeout=self.timeout,
                ),
            )

    def _loop(self, out_r: int) -> _Outcome:
        self.sel.register(out_r, selectors.EVENT_READ, "output")
        exited_at: float | None = None
        while True:
            self._check_deadline()
            self._throttle()
            for key, _events in self.sel.select(timeout=0.05):
                if key.data == "accept":
                    self._accept()
                elif key.data == "output":
                    chunk = os.read(out_r, 65536)
                    if chunk:
                        self._take_output(chunk)
                    else:
                        self.sel.unregister(out_r)
                else:
                    self._read(key.data)
            self._reap()
            self._answer_quiet()
            outcome = self._decide()
            if outcome is not None:
                if outcome.status == PASSED and LEARNER not in self.status:
                    # Let the learner's process finish writing its output (it exits right
                    # after "done"); stop it if it lingers.
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at < 1.0:
                        continue
                return outcome
            now = time.monotonic()
            if (
                self.checked
                and REFERENCE in self.status
                and any(
                    self.sides[(REFERENCE, r)].end is None
                    and self.sides[(REFERENCE, r)].closed
                    or self.sides[(REFERENCE, r)].sock is None
                    for r in range(self.ranks)
                )
            ):
                raise self._ref_interrupted(self._describe_status(REFERENCE))
            self._watch_reference()
            if LEARNER in self.status:
                exited_at = exited_at or now
                open_socks = any(not s.closed and s.sock is not None for s in self.sides.values() if s.role == LEARNER)
                if open_socks and now - exited_at < 0.5:
                    continue  # the last messages are still arriving
                # Results the learner sent before it ended are judged first: wait for the
                # reference run to produce their pairs (the deadline still applies).
                waiting = self.checked and any(
                    (self.compared[r] < len(self.sides[(LEARNER, r)].obs) or self.sides[(LEARNER, r)].end is not None)
                    and self.sides[(REFERENCE, r)].end is None
                    for r in range(self.ranks)
                )
                if waiting:
                    continue
                return self._exited()

    def _throttle(self) -> None:
        """Stop reading a side that is far ahead of its pair, so the judge's memory stays bounded."""
        for side in self.sides.values():
            if side.sock is None or side.closed:
                continue
            ahead = len(side.obs) - self.compared[side.rank] > _BACKLOG
            registered = side.sock in {k.fileobj for k in self.sel.get_map().values()}
            if ahead and registered:
                self.sel.unregister(side.sock)
            elif not ahead and not registered:
                self.sel.register(side.sock, selectors.EVENT_READ, side)

    def _answer_quiet(self) -> None:
        ref_over = (
            not self.checked
            or REFERENCE in self.status
            or all(self.sides[(REFERENCE, r)].end for r in range(self.ranks))
        )
        if not ref_over:
            return
        for side in self.sides.values():
            if side.wants_quiet and side.sock is not None:
                side.wants_quiet = False
                try:
                    side.sock.send(b"q")
                except OSError:
                    pass

    def _read(self, side: _Side) -> None:
        assert side.sock is not None
        try:
            chunk = side.sock.recv(1 << 20)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.sel.unregister(side.sock)
            side.closed = True
            return
        try:
            messages = side.reader.feed(chunk)
        except wire.WireError as exc:
            if side.role == REFERENCE:
                raise self._ref_broken(str(exc)) from None
            raise _Outcome(
                FAILED, self._prefix(side) + _("the check received a message it cannot read: {why}", why=exc)
            ) from None
        for msg in messages:
            self._handle(side, msg)

    def _prefix(self, side: _Side) -> str:
        return _("rank {rank}: ", rank=side.rank) if self.ranks > 1 else ""

    def _handle(self, side: _Side, msg: Any) -> None:
        if not isinstance(msg, tuple) or not msg or not isinstance(msg[0], str):
            raise _Outcome(FAILED, self._prefix(side) + _("the check received a malformed message"))
        kind = msg[0]
        if side.end is not None:
            if side.role == REFERENCE:
                raise self._ref_broken(_("it sent a message after it ended"))
            raise _Outcome(
                FAILED,
                self._prefix(side)
                + _("your process reported again after the check had ended; the check cannot trust this run"),
            )
        if kind == "obs" and len(msg) == 5:
            side.obs.append(msg)
        elif kind == "phase" and side.role == LEARNER and len(msg) == 3:
            if side.rank == 0 and isinstance(msg[1], str):
                self.emit(Event("phase", msg[1][:200], self._elapsed(), msg[2] if isinstance(msg[2], dict) else {}))
        elif kind == "figure" and side.role == LEARNER and len(msg) == 3:
            if side.rank == 0 and isinstance(msg[1], str):
                self.figures[msg[1]] = msg[2]
                self.emit(Event("figure", msg[1], self._elapsed(), {"value": msg[2]}))
        elif kind == "quiet?":
            side.wants_quiet = True
        elif kind == "compiling" and len(msg) == 1:
            self._compiling()
        elif kind in ("done", "failed", "error", "exit"):
            side.end = msg
        else:
            raise _Outcome(FAILED, self._prefix(side) + _("the check received an unknown message {kind!r}", kind=kind))

    def _compiling(self) -> None:
        """A process started a torch.compile: give the run the time a cold compile needs on a
        busy 2-core machine (once), and say so, with the new limit for the client's deadline."""
        if self.timeout >= self.request.timeout + COMPILE_EXTRA_S:
            return
        self.timeout = self.request.timeout + COMPILE_EXTRA_S
        self.emit(
            Event(
                "phase",
                _("compiling with torch.compile (a first compile takes a while on a CPU)"),
                self._elapsed(),
                {"timeout_s": self.timeout},
            )
        )

    # -- judging -------------------------------------------------------------------------------

    def _decide(self) -> _Outcome | None:
        """The verdict, once the two runs say enough to reach one; None while waiting."""
        if not self.checked:
            side = self.sides[(LEARNER, 0)]
            if side.end is not None:
                if side.end[0] == "exit" and len(side.end) > 1 and side.end[1] in (0, None):
                    return _Outcome(PASSED, _("the program ran to the end"))
                return self._learner_end(side) or _Outcome(PASSED, _("the program ran to the end"))
            return None
        passed = 0
        for r in range(self.ranks):
            ref, mine = self.sides[(REFERENCE, r)], self.sides[(LEARNER, r)]
            if ref.end is not None and ref.end[0] != "done":
                raise self._ref_broken(self._describe_end(ref.end))
            while self.compared[r] < min(len(ref.obs), len(mine.obs)):
                i = self.compared[r]
                if mine.obs[i][1] == "true" and mine.obs[i][3] is True and ref.obs[i][1] != "true":
                    # A diagnostic fact the checker states only on the learner's path, and it
                    # holds: it neither passes nor fails anything, so it is not paired.
                    del mine.obs[i]
                    continue
                unpaired = self._unpaired_call(ref, mine, i)
                if unpaired is not None:
                    if unpaired:
                        return _Outcome(FAILED, self._prefix(mine) + unpaired[0], unpaired[1])
                    continue
                failure = self._compare(ref.obs[i], mine.obs[i])
                self.compared[r] += 1
                if failure:
                    return _Outcome(FAILED, self._prefix(mine) + failure[0], failure[1])
            if mine.end is None:
                continue
            while ref.end is not None and self.compared[r] == len(ref.obs) < len(mine.obs):
                # Past the reference's last result: calls only the learner's path made (a
                # diagnosis after a wrong value) are judged as above, then dropped.
                trailing = self._unpaired_call(ref, mine, self.compared[r])
                if trailing:
                    return _Outcome(FAILED, self._prefix(mine) + trailing[0], trailing[1])
                if trailing is None:
                    break
            made = len(mine.obs)
            if mine.end[0] != "done":
                if self.compared[r] == made:  # everything before it matched
                    return self._learner_end(mine)
                if ref.end is not None:  # the reference made fewer observations
                    return self._learner_end(mine)
                continue
            if ref.end is None:
                if len(ref.obs) > made:
                    return self._ended_early(mine, made)
                continue
            if len(ref.obs) != made:
                if len(ref.obs) > made:
                    return self._ended_early(mine, made)
                return _Outcome(
                    FAILED,
                    self._prefix(mine)
                    + _(
                        "your run reported {made} results where the check makes {expected}; the check cannot "
                        "trust this run",
                        made=made,
                        expected=len(ref.obs),
                    ),
                )
            if self.compared[r] == made:
                passed += 1
        if passed == self.ranks:
            return _Outcome(PASSED, _("all checks passed"))
        return None

    def _unpaired_call(self, ref: _Side, mine: _Side, i: int) -> judging.Failure | tuple[()] | None:
        """A call's contract (kind "left") on one side where the other side's result at `i` is
        something else: the checker called learner code on one path only (a diagnosis). Such a
        result is dropped, after judging the learner's changes against every change the
        reference's calls of the same name reported. None: the two results are paired."""
        theirs = ref.obs[i] if i < len(ref.obs) else None
        ours = mine.obs[i] if i < len(mine.obs) else None
        if ours is not None and ours[1] == "left" and (theirs is None or theirs[1:3] != ours[1:3]):
            same = [o[3] for o in ref.obs if o[1] == "left" and o[2] == ours[2]]
            del mine.obs[i]
            known = [item for changes in same for item in (changes if isinstance(changes, list) else [])]
            return judging.judge("left", str(ours[2]), ours[3], known, {}) or ()
        if theirs is not None and theirs[1] == "left" and ours is not None and ours[1:3] != theirs[1:3]:
            del ref.obs[i]  # the reference's path only: nothing of the learner's to judge
            return ()
        return None

    def _ended_early(self, side: _Side, made: int) -> _Outcome:
        return _Outcome(
            FAILED,
            self._prefix(side)
            + _(
                "your run said it was done after {made} of the check's results; the check cannot trust this run",
                made=made,
            ),
        )

    def _compare(self, ref: tuple[Any, ...], mine: tuple[Any, ...]) -> judging.Failure | None:
        _tag, kind, name, expected, options = ref
        _tag, my_kind, my_name, actual, _opts = mine
        if my_kind == "true" and actual is not True:
            # A fact that is false in the learner's run fails it, wherever the reference run
            # was: checkers diagnose a wrong result on their own path ("lengths count PAD").
            return (str(my_name), [])
        if my_kind == kind and kind in ("close", "equal") and my_name != name:
            # A name the checker built from the learner's result (its diagnosis): judge the
            # value, and show the learner run's words when it is wrong.
            failure = judging.judge(kind, str(my_name), actual, expected, options if isinstance(options, dict) else {})
            if failure:
                return failure
        if my_kind != kind or (kind != "true" and my_name != name):
            return (
                _(
                    "the check took a different path with your code: it expected to check "
                    "`{name}` next, your run checked `{mine}`",
                    name=name,
                    mine=my_name,
                ),
                [],
            )
        if kind == "true":
            return None if actual is True else (str(my_name), [])
        if kind in ("close_here", "equal_here"):
            if not (isinstance(actual, tuple) and len(actual) == 2):
                return (_("{name}: the check received a malformed result", name=name), [])
            return judging.judge(
                kind.removesuffix("_here"),
                str(name),
                actual[0],
                actual[1],
                options if isinstance(options, dict) else {},
            )
        return judging.judge(kind, str(name), actual, expected, options if isinstance(options, dict) else {})

    def _learner_end(self, side: _Side) -> _Outcome | None:
        end = side.end or ("done",)
        kind, args = end[0], end[1:]
        p = self._prefix(side)
        if kind == "failed":
            return _Outcome(FAILED, p + str(args[0]), [str(d) for d in _as_list(args[1] if len(args) > 1 else [])])
        if kind == "error":
            return _Outcome(ERROR, p + str(args[0]), [str(d) for d in _as_list(args[1] if len(args) > 1 else [])])
        if kind == "exit":
            return _Outcome(ERROR, p + _("your code called sys.exit({code!r}) before the check finished", code=args[0]))
        return None

    @staticmethod
    def _describe_end(end: tuple[Any, ...]) -> str:
        if end[0] in ("failed", "error") and len(end) > 1:
            return str(end[1])
        if end[0] == "exit":
            return _("it called sys.exit({code!r})", code=end[1])
        return _("it ended unexpectedly")

    def _ref_interrupted(self, how: str) -> _Outcome:
        """The reference run was killed or stopped from outside before it ended: the learner's
        process is the likeliest cause (it runs beside it, as the same user), or memory."""
        return _Outcome(
            ERROR,
            _(
                "the check could not finish: the reference run (the solution checked beside yours) was "
                "interrupted ({how}) while your code ran. If your code stops or kills other processes, remove that; "
                "otherwise the machine may be short of memory: try again",
                how=how,
            ),
        )

    def _watch_reference(self) -> None:
        """A stopped reference run (SIGSTOP) never finishes: say so in a second, not at the deadline."""
        pid = self.pids.get(REFERENCE)
        now = time.monotonic()
        if pid is None or REFERENCE in self.status or now - self._ref_looked < 0.5:
            return
        self._ref_looked = now
        if not sandbox.stopped(pid):
            self._ref_stopped_at = None
        elif self._ref_stopped_at is None:
            self._ref_stopped_at = now
        elif now - self._ref_stopped_at >= 1.0:
            raise self._ref_interrupted(_("stopped by SIGSTOP"))

    def _ref_broken(self, why: str) -> _Outcome:
        return _Outcome(
            ERROR,
            _("the reference run of this check failed, which is a bug in the course, not in your code: {why}", why=why),
        )

    def _exited(self) -> _Outcome:
        """The learner's run ended without a verdict from its messages."""
        for r in range(self.ranks):
            side = self.sides[(LEARNER, r)]
            if side.end is not None and side.end[0] != "done":
                return self._learner_end(side) or _Outcome(ERROR, _("your run ended before the check finished"))
        if all(self.sides[(LEARNER, r)].end is not None for r in range(self.ranks)):
            return _Outcome(ERROR, _("your run ended before the check finished"))
        return _Outcome(*self._exit_reason())

    def _describe_status(self, role: str) -> str:
        status = self.status.get(role, 0)
        if role in self.procs:
            return _("torchrun exit code {code}", code=status)
        if self.ranks > 1 and os.WIFEXITED(status):
            return _("a rank failed (launcher exit code {code})", code=os.WEXITSTATUS(status))
        if os.WIFSIGNALED(status):
            return _("killed by signal {signal}", signal=os.WTERMSIG(status))
        return _("exit code {code}", code=os.WEXITSTATUS(status))

    def _exit_reason(self) -> tuple[str, str]:
        status = self.status.get(LEARNER, 0)
        if LEARNER in self.procs:  # torchrun: a rank failed without reporting
            return (
                ERROR,
                _(
                    "a process of the distributed run failed (torchrun exit code {code}); see the output below",
                    code=status,
                ),
            )
        if self.ranks > 1 and os.WIFEXITED(status):  # forked ranks: one failed without reporting
            return (ERROR, _("a process of the distributed run failed; see the output below"))
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            known = {int(k): v for k, v in _SIGNAL_NAMES.items()}
            name = known.get(sig) or (
                signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
            )
            return (CRASHED, _("your code crashed the process with {signal}", signal=_(name)))
        code = os.WEXITSTATUS(status)
        if not self.checked:
            return (ERROR, _("your program exited with exit code {code}", code=code))
        return (ERROR, _("your program exited (exit code {code}) before the check finished", code=code))

    def _take_output(self, chunk: bytes) -> None:
        self.output_total += len(chunk)
        room = OUTPUT_CAP - len(self.output)
        if room > 0:
            piece = chunk[:room]
            self.output += piece
            self.emit(Event("output", piece.decode("utf-8", errors="replace"), self._elapsed()))

    def _elapsed(self) -> float:
        return time.monotonic() - self.start


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def supervise(request: RunRequest, emit: Emit, tmpdir: Path) -> Verdict:
    return Supervisor(request, emit, tmpdir).run()
