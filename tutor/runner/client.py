"""The runner as the app and the CLI see it. Plain Python: no torch, no Textual.

`Runner` keeps one warm server process (`python -m tutor.runner.server`) that has imported torch,
and asks it for one run at a time. `run()` blocks (call it from a worker thread in the UI);
`cancel()` may be called from any thread.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tutor import coursefiles, i18n, paths, seeds
from tutor.course import DEFAULT_LANGUAGE, Exercise, LessonError, reason_catalogue
from tutor.i18n import _
from tutor.runner import sandbox
from tutor.runner.protocol import CANCELLED, ERROR, SKIPPED, TIMEOUT, Event, RunRequest, Verdict

OnEvent = Callable[[Event], None]

DEFAULT_MEMORY_LIMIT_MB = 8192
START_TIMEOUT_S = 120.0  # importing torch on a cold, busy machine
GRACE_S = 15.0  # past a run's own timeout before the client gives up on the server
POLL_S = 0.5  # how often a waiting client looks at whether the server is still there
SILENCE_S = 10.0  # no word from a server for this long while a run is in flight: it is stuck

# The server starts without the caller's directory on sys.path: a learner's scratch
# `torch.py` or `random.py` next to where they typed `tutor` must not shadow the real ones.
_BOOT = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "sys.path.insert(0, {pkg!r}); from tutor.runner.server import main; main()"
)


class _Sources:
    """The course's checkers, solutions and checker helpers as they were when this client
    first read them (before any learner code ran): every run uses these copies, so code that
    rewrites a checker or solution file on disk cannot change what judges it."""

    def __init__(self) -> None:
        self._texts: dict[Path, str] = {}
        self._reasons: dict[tuple[Path, str], dict[str, str]] = {}
        self._lock = threading.Lock()
        self._verifier: coursefiles.Verifier | None = None

    def preload(self, root: Path) -> None:
        for pattern in coursefiles.PATTERNS:
            for path in root.glob(pattern):
                try:
                    self.text(path)
                except coursefiles.CourseFileChanged:
                    pass  # not kept: the check that needs it says so

    def text(self, path: Path) -> str:
        """The file's text as first read, verified against the hashes recorded at install."""
        path = path.resolve()
        with self._lock:
            if path not in self._texts:
                data = path.read_bytes()
                if self._verifier is None:
                    self._verifier = coursefiles.Verifier(paths.course_root())
                self._verifier.verify(path, data)
                self._texts[path] = data.decode("utf-8")
            return self._texts[path]

    def for_exercise(self, exercise: Exercise) -> dict[str, Any]:
        return {
            **self.for_paths(Path(exercise.checker), Path(exercise.solution)),
            "allows": list(exercise.allows),
        }

    def for_paths(self, checker: Path, solution: Path) -> dict[str, Any]:
        helpers = {
            p.stem: [str(p), self.text(p)]
            for p in sorted(checker.parent.glob("*.py"))
            if p.resolve() != checker.resolve()
        }
        return {
            "checker": self.text(checker),
            "solution": self.text(solution),
            "helpers": helpers,
            "reasons": self.reasons(checker.parent.parent, i18n.language()),
        }

    def reasons(self, chapter_dir: Path, lang: str) -> dict[str, str]:
        """The chapter's checker reasons in `lang` (read once, like the sources)."""
        if lang == DEFAULT_LANGUAGE:
            return {}
        key = (chapter_dir.resolve(), lang)
        with self._lock:
            if key not in self._reasons:
                try:
                    self._reasons[key] = reason_catalogue(chapter_dir, lang)
                except LessonError:
                    self._reasons[key] = {}  # `tutor dev check` names the broken entry; reasons stay English
            return self._reasons[key]


_SOURCES = _Sources()


def _changed(exc: coursefiles.CourseFileChanged) -> str:
    return _(
        "the course file {file} is not the one installed with tutor (it was changed on disk), so this "
        "exercise cannot be judged; reinstall tutor to restore it (pip install --force-reinstall pytorch-tutor)",
        file=exc,
    )


class RunnerError(Exception):
    """The runner process could not be started or died."""


@dataclass(frozen=True)
class MachineInfo:
    torch: str
    gpus: int
    import_s: float


class Runner:
    def __init__(
        self,
        cache_dir: Path | None = None,
        python: str = sys.executable,
        device: str = "auto",
        grace_s: float = GRACE_S,
    ) -> None:
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, not {device!r}")
        self.python = python
        self.device = device
        self.cache_dir = cache_dir
        self.grace_s = grace_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._info: MachineInfo | None = None
        self._start_lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._current: str | None = None
        self._buf = bytearray()
        self._eof = False  # the server closed its end

    # -- the warm process ----------------------------------------------------------------------

    def start(self) -> MachineInfo:
        """Start the warm server if it is not running; wait until it has imported torch."""
        with self._start_lock:
            if self._proc is not None and self._proc.poll() is None and self._info is not None:
                return self._info
            self._stop_server()
            # No learner process may open this process's descriptors (the pipes to the server).
            sandbox.make_private()
            try:
                _SOURCES.preload(paths.course_root())
            except OSError:
                pass
            package_parent = str(Path(__file__).resolve().parents[2])
            try:
                self._proc = subprocess.Popen(
                    [self.python, "-c", _BOOT.format(pkg=package_parent)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    cwd=os.path.abspath(os.sep),
                    start_new_session=True,
                )
            except OSError as exc:
                raise RunnerError(_("cannot start the runner: {why}", why=exc)) from None
            self._buf = bytearray()
            self._eof = False
            first = self._read_message(time.monotonic() + START_TIMEOUT_S)
            if first is None or first.get("kind") != "ready":
                self._stop_server()
                raise RunnerError(_("the runner did not start (is torch installed? try `tutor doctor`)"))
            try:
                self._info = MachineInfo(str(first["torch"]), int(first["gpus"]), float(first["import_s"]))
            except (KeyError, TypeError, ValueError):
                self._stop_server()
                raise RunnerError(_("the runner sent an unreadable greeting; try `tutor doctor`")) from None
            return self._info

    @property
    def info(self) -> MachineInfo:
        return self.start()

    @property
    def server_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _read_message(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line from the server, or None when it closed its end or the deadline
        passed. A line that is not JSON raises RunnerError."""
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        fd = proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _w, _x = select.select([fd], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self._eof = True
                return None
            self._buf += chunk
        line, _nl, rest = bytes(self._buf).partition(b"\n")
        self._buf = bytearray(rest)
        try:
            msg = json.loads(line)
        except ValueError:
            raise RunnerError(
                _("the runner sent a line it should not have ({line!r}); it was restarted", line=line[:60])
            ) from None
        if not isinstance(msg, dict):
            raise RunnerError(_("the runner sent an unreadable message; it was restarted"))
        return msg

    def _send(self, message: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise RunnerError(_("the runner is not running"))
        with self._write_lock:
            try:
                proc.stdin.write((json.dumps(message) + "\n").encode())
                proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:
                raise RunnerError(_("the runner stopped: {why}", why=exc)) from None

    def _stop_server(self) -> None:
        """Kill the server now (it hangs, or it said something it should not have)."""
        proc, self._proc, self._info = self._proc, None, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass

    def close(self) -> None:
        proc = self._proc
        if proc is not None:
            try:
                if proc.stdin:
                    proc.stdin.close()
                proc.wait(timeout=3)
            except (subprocess.TimeoutExpired, OSError, ValueError):
                pass
            self._stop_server()

    # -- runs ----------------------------------------------------------------------------------

    def resolve_device(self, exercise: Exercise) -> tuple[str | None, str]:
        """The device this exercise runs on here, or None with the reason it cannot run."""
        return exercise.needs.device_here(self.info.gpus, self.device)

    def request_for(self, exercise: Exercise, code: Path, seed: int | None = None, device: str = "cpu") -> RunRequest:
        return RunRequest(
            exercise=exercise.key,
            code=str(code),
            solution=str(exercise.solution),
            checker=str(exercise.checker),
            timeout=exercise.timeout,
            device=device,
            processes=exercise.needs.processes,
            worlds=list(exercise.needs.worlds),
            seed=seed if seed is not None else seeds.draw(exercise.id),
            memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB if device == "cpu" else None,
            cache_dir=str(self.cache_dir) if self.cache_dir else None,
            sources=_SOURCES.for_exercise(exercise),
            lang=i18n.language(),
        )

    def check(
        self, exercise: Exercise, code: Path, on_event: OnEvent | None = None, seed: int | None = None
    ) -> Verdict:
        """Check `code` (the learner's file or the solution) for `exercise`."""
        try:
            device, why = self.resolve_device(exercise)
        except RunnerError as exc:
            return Verdict(status=ERROR, reason=str(exc))
        if device is None:
            return Verdict(status=SKIPPED, reason=why)
        try:
            request = self.request_for(exercise, code, seed, device)
        except coursefiles.CourseFileChanged as exc:
            return Verdict(status=ERROR, reason=_changed(exc))
        except (OSError, UnicodeDecodeError) as exc:
            return Verdict(status=ERROR, reason=_("cannot read the course's files for this exercise: {why}", why=exc))
        return self.run(request, on_event)

    def run_script(self, path: Path, on_event: OnEvent | None = None, timeout: float = 120) -> Verdict:
        """Run a plain Python program (a typed-along passage) on the CPU and capture its output;
        the verdict passes when it exits cleanly."""
        request = RunRequest(
            exercise=f"script:{path.name}",
            code=str(path),
            solution="",
            checker="",
            timeout=timeout,
            device="cpu",
            seed=0,
            memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB,
            cache_dir=str(self.cache_dir) if self.cache_dir else None,
            lang=i18n.language(),
        )
        return self.run(request, on_event)

    def run(self, request: RunRequest, on_event: OnEvent | None = None) -> Verdict:
        """Run one request; blocks until its verdict. One run at a time per Runner.

        The client keeps a deadline of its own (the run's timeout plus a grace), and the
        server says it is alive every second: a server that is stopped or falls silent is
        killed and restarted within seconds (and a request it never took is sent again), never
        waited on for the whole timeout."""
        if request.checker and request.sources is None:
            try:
                request.sources = _SOURCES.for_paths(Path(request.checker), Path(request.solution))
            except coursefiles.CourseFileChanged as exc:
                return Verdict(status=ERROR, reason=_changed(exc), seed=request.seed)
            except (OSError, UnicodeDecodeError) as exc:
                return Verdict(
                    status=ERROR, reason=_("cannot read the check's files: {why}", why=exc), seed=request.seed
                )
        with self._run_lock:
            for attempt in range(2):
                try:
                    self.start()
                except RunnerError as exc:
                    return Verdict(status=ERROR, reason=str(exc), seed=request.seed)
                verdict = self._run_once(request, on_event, retry=attempt == 0)
                if verdict is not None:
                    return verdict
            raise AssertionError("unreachable: the second attempt always returns")  # pragma: no cover

    def _run_once(self, request: RunRequest, on_event: OnEvent | None, retry: bool) -> Verdict | None:
        """One request to the current server: its verdict, or None when the server got stuck
        before it took the request and `retry` allows sending it again to a fresh one."""
        run_id = secrets.token_hex(12)
        self._current = run_id
        started = heard = time.monotonic()
        deadline = started + request.timeout + self.grace_s
        taken = False
        try:
            self._send({"op": "run", "id": run_id, "request": request.__dict__})
            while True:
                msg = self._read_message(min(deadline, time.monotonic() + POLL_S))
                now = time.monotonic()
                if msg is None:
                    if self._eof:
                        self._stop_server()
                        return Verdict(
                            status=ERROR,
                            seed=request.seed,
                            reason=_("the runner process died; it will restart on the next run"),
                        )
                    if now >= deadline:
                        self._stop_server()
                        return Verdict(
                            status=TIMEOUT,
                            seed=request.seed,
                            reason=_(
                                "the runner stopped answering ({timeout:g} s timeout passed); it was restarted",
                                timeout=request.timeout,
                            ),
                        )
                    if self._server_stopped() or now - heard > SILENCE_S:
                        self._stop_server()
                        if retry and not taken:
                            return None
                        return Verdict(
                            status=ERROR,
                            seed=request.seed,
                            reason=_(
                                "the runner stopped answering (it was stopped or is stuck); it was restarted: check again"
                            ),
                        )
                    continue
                heard = now
                if msg.get("id") != run_id:
                    continue  # a heartbeat, or a late message of an earlier, cancelled run
                kind = msg.get("kind")
                if kind == "ack":
                    taken = True
                elif kind == "event":
                    try:
                        event = Event(**msg["event"])
                    except (KeyError, TypeError):
                        continue
                    limit = event.info.get("timeout_s") if isinstance(event.info, dict) else None
                    if isinstance(limit, (int, float)) and limit > request.timeout:
                        # The run got more time (a compile started): so does our deadline.
                        deadline = max(deadline, started + float(limit) + self.grace_s)
                    if on_event is not None:
                        on_event(event)
                elif kind == "verdict":
                    v = msg.get("verdict")
                    if not isinstance(v, dict):
                        raise RunnerError(_("the runner sent an unreadable verdict"))
                    v.setdefault("seed", request.seed)
                    try:
                        return Verdict.from_dict(v)
                    except TypeError:
                        raise RunnerError(_("the runner sent an unreadable verdict")) from None
        except RunnerError as exc:
            self._stop_server()
            return Verdict(status=ERROR, reason=str(exc), seed=request.seed)
        finally:
            self._current = None

    def _server_stopped(self) -> bool:
        """The server is stopped (SIGSTOP, a debugger): it will never answer."""
        return self._proc is None or sandbox.stopped(self._proc.pid)

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
