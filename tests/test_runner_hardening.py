"""The runner against learners who make mistakes and learners who try to cheat (issue 11).

Every case goes through the real runner: a warm server, a supervisor, and the two checked
processes (the learner's and the reference's). Wrong answers here are `x / 2` for `double`
and `sigmoid(x + 1)`-like fakes: each test asserts the trick does not turn them into a pass.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tutor.progress import Progress
from tutor.runner.client import Runner
from tutor.runner.protocol import RunRequest, Verdict

FIX = Path(__file__).parent / "runner_fixtures"
ROOT = Path(__file__).resolve().parents[1]
TUTOR = [str(Path(sys.executable).with_name("tutor"))]  # the console script a learner types


def request(path: Path, fixture: str = "double", timeout: float = 20, **kw) -> RunRequest:
    return RunRequest(
        exercise=f"test/{fixture}",
        code=str(path),
        solution=str(FIX / f"{fixture}_solution.py"),
        checker=str(FIX / f"{fixture}_check.py"),
        timeout=timeout,
        seed=7,
        **kw,
    )


def check(
    runner: Runner, tmp_path: Path, source: str, fixture: str = "double", name: str = "learner.py", **kw
) -> Verdict:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return runner.run(request(path, fixture, **kw))


@pytest.fixture(scope="module")
def plain_runner(tmp_path_factory: pytest.TempPathFactory):
    """A runner started the way a learner's shell starts it: no PYTHONUNBUFFERED, bytecode on."""
    saved = {k: os.environ.pop(k) for k in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE") if k in os.environ}
    r = Runner(cache_dir=tmp_path_factory.mktemp("cache"), device="cpu", grace_s=4)
    r.start()
    os.environ.update(saved)
    yield r
    r.close()


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# -- output always arrives -------------------------------------------------------------------

OUTCOMES = {
    "passed": "print('hello from the top')\ndef double(x):\n    print('in double')\n    return x * 2\n",
    "failed": "print('hello from the top')\ndef double(x):\n    print('in double')\n    return x / 2\n",
    "error": "print('hello from the top')\ndef double(x):\n    print('in double')\n    raise ValueError('nope')\n",
    "timeout": "print('hello from the top')\ndef double(x):\n    print('in double')\n    while True:\n        pass\n",
    "crashed": (
        "import os, signal\nprint('hello from the top')\ndef double(x):\n    print('in double')\n"
        "    os.kill(os.getpid(), signal.SIGSEGV)\n"
    ),
}


@pytest.mark.parametrize("status", list(OUTCOMES))
def test_output_arrives_on_every_outcome_without_pythonunbuffered(plain_runner, tmp_path, status):
    v = check(plain_runner, tmp_path, OUTCOMES[status], timeout=3 if status == "timeout" else 20)
    assert v.status == status, v
    assert "hello from the top" in v.output and "in double" in v.output, v.output


def test_partial_line_arrives_before_a_crash(plain_runner, tmp_path):
    src = (
        "import os, signal, sys\ndef double(x):\n    sys.stdout.write('no newline yet')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    v = check(plain_runner, tmp_path, src)
    assert v.status == "crashed" and "no newline yet" in v.output


def test_typed_along_program_output_arrives(plain_runner, tmp_path):
    path = tmp_path / "passage.py"
    path.write_text("import torch\nprint('sum:', int(torch.arange(5).sum()))\n")
    v = plain_runner.run_script(path)
    assert v.status == "passed" and "sum: 10" in v.output


def test_a_program_that_exits_zero_ran_to_the_end(plain_runner, tmp_path):
    path = tmp_path / "passage.py"
    path.write_text("import sys\nprint('bye')\nsys.exit(0)\n")
    v = plain_runner.run_script(path)
    assert v.status == "passed" and "bye" in v.output


# -- the code checked is the code on disk ----------------------------------------------------


def test_two_edits_within_one_second_are_both_checked(plain_runner, tmp_path):
    path = tmp_path / "learner.py"
    right, wrong = "def double(x):\n    return x * 2\n", "def double(x):\n    return x * 3\n"
    assert len(right) == len(wrong)
    for first, second, expect in ((right, wrong, "failed"), (wrong, right, "passed")):
        path.write_text(first)
        stamp = path.stat().st_mtime_ns
        plain_runner.run(request(path))
        path.write_text(second)
        os.utime(path, ns=(stamp, stamp))  # same size, same mtime: a stale .pyc would match
        assert plain_runner.run(request(path)).status == expect


def test_latin1_source_with_a_coding_line_runs(plain_runner, tmp_path):
    path = tmp_path / "learner.py"
    path.write_bytes("# -*- coding: latin-1 -*-\n# café\ndef double(x):\n    return x * 2\n".encode("latin-1"))
    assert plain_runner.run(request(path)).status == "passed"


# -- the runner is immune to the learner's working directory ---------------------------------


def test_scratch_modules_in_the_working_directory_do_not_break_the_runner(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    for name in ("torch", "random", "numpy", "typing", "json"):
        (scratch / f"{name}.py").write_text("raise SystemExit('shadowed!')\n")
    monkeypatch.chdir(scratch)
    with Runner(device="cpu") as r:
        (tmp_path / "learner.py").write_text("def double(x):\n    return x * 2\n")
        assert r.run(request(tmp_path / "learner.py")).status == "passed"


def test_cli_check_in_a_folder_with_a_scratch_torch_py(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "torch.py").write_text("print('not torch')\n")
    (scratch / "random.py").write_text("raise SystemExit('shadowed!')\n")
    env = dict(os.environ, TUTOR_HOME=str(tmp_path / "home"))
    out = subprocess.run(
        [*TUTOR, "check", "sigmoid", "--solutions", "--device", "cpu", "--json"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["status"] == "passed"
    assert "Traceback" not in out.stderr


# -- learner text is shown as text -----------------------------------------------------------


def test_cli_shows_markup_and_escapes_as_plain_text(tmp_path):
    home = tmp_path / "home"
    env = dict(os.environ, TUTOR_HOME=str(home), COLUMNS="200")
    subprocess.run([*TUTOR, "check", "sigmoid", "--device", "cpu"], env=env, capture_output=True, timeout=300)
    learner = home / "workspace" / "02-custom-autograd" / "sigmoid.py"
    assert learner.exists()  # created from the stub by the first check
    learner.write_text(
        (ROOT / "solutions" / "02-custom-autograd" / "sigmoid.py").read_text()
        + "\nprint('\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07cleared [bold]x[/bold]')\n"
        "def sigmoid(x):\n    idx, s, i = 0, x, 0\n    return x[idx] * s[i] + helper()\n"
        "def helper():\n    raise ValueError('cannot read [/tmp/data.pt]')\n"
    )
    out = subprocess.run(
        [*TUTOR, "check", "sigmoid", "--device", "cpu"], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr and "MarkupError" not in out.stderr
    text = out.stdout
    assert "[/tmp/data.pt]" in text
    assert "return x[idx] * s[i] + helper()" in text
    assert "[bold]x[/bold]" in text and "cleared" in text
    assert "\x1b]52" not in text and "\x1b[2J" not in text


# -- nothing hangs, nothing survives the run --------------------------------------------------


def test_a_stopped_server_gives_a_verdict_and_the_next_check_works(tmp_path):
    with Runner(device="cpu", grace_s=3) as r:
        r.start()
        pid = r.server_pid
        assert pid
        threading.Timer(0.3, lambda: os.kill(pid, signal.SIGSTOP)).start()
        start = time.monotonic()
        v = check(r, tmp_path, "import time\ndef double(x):\n    time.sleep(1)\n    return x * 2\n", timeout=4)
        assert time.monotonic() - start < 4 + 3 + 5
        assert v.status in ("timeout", "error") and "restarted" in v.reason
        assert not alive(pid)
        assert check(r, tmp_path, "def double(x):\n    return x * 2\n").status == "passed"


def test_a_stopped_supervisor_gives_a_verdict_and_the_next_check_works(tmp_path):
    with Runner(device="cpu", grace_s=3) as r:
        src = "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\ndef double(x):\n    return x / 2\n"
        r.start()
        start = time.monotonic()
        v = check(r, tmp_path, src, timeout=4)
        assert time.monotonic() - start < 4 + 3 + 5
        assert v.status in ("timeout", "error") and v.status != "passed"
        assert check(r, tmp_path, "def double(x):\n    return x * 2\n").status == "passed"


def test_leaving_the_process_group_cannot_hang_the_supervisor(runner, tmp_path):
    src = "import os\nos.setpgid(0, os.getpgid(os.getppid()))\ndef double(x):\n    import time\n    time.sleep(60)\n"
    start = time.monotonic()
    v = check(runner, tmp_path, src, timeout=3)
    assert v.status == "timeout" and time.monotonic() - start < 15


def test_a_setsid_double_forked_grandchild_is_gone_after_the_verdict(runner, tmp_path):
    marker = tmp_path / "grandchild.pid"
    src = f"""
    import os, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            open({str(marker)!r}, "w").write(str(os.getpid()))
            time.sleep(300)
        os._exit(0)
    time.sleep(0.3)
    def double(x):
        return x * 2
    """
    v = check(runner, tmp_path, src)
    assert v.status == "passed", v
    pid = int(marker.read_text())
    deadline = time.monotonic() + 2
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_a_learner_who_floods_the_channel_without_reading_cannot_block_the_judge(runner, tmp_path):
    src = """
    import os, socket
    from tutor.runner import wire
    fds = [int(n) for n in os.listdir('/proc/self/fd') if int(n) > 2]
    for fd in fds:
        try:
            s = socket.socket(fileno=os.dup(fd))
            s.setblocking(True)
            for _ in range(5000):
                s.sendall(wire.encode(("obs", "close", "output", list(range(2000)), {})))
        except OSError:
            pass
    def double(x):
        return x * 2
    """
    start = time.monotonic()
    v = check(runner, tmp_path, src, timeout=10)
    assert v.status != "passed" and time.monotonic() - start < 25


def test_an_oversized_message_is_refused_without_buffering_it(runner, tmp_path):
    src = """
    import os, socket, struct
    for n in os.listdir('/proc/self/fd'):
        if int(n) > 2:
            try:
                s = socket.socket(fileno=os.dup(int(n)))
                s.sendall(struct.pack('!II', 16, 1 << 30) + b'x' * (1 << 20))
            except OSError:
                pass
    def double(x):
        return x * 2
    """
    v = check(runner, tmp_path, src)
    assert v.status == "failed" and "larger than" in v.reason


def test_a_cancelled_run_leaves_no_folder_behind(runner, tmp_path):
    before = set(Path("/tmp").glob("tutor-run-*"))
    path = tmp_path / "loop.py"
    path.write_text("def double(x):\n    while True:\n        pass\n")
    threading.Timer(0.6, runner.cancel).start()
    assert runner.run(request(path, timeout=30)).status == "cancelled"
    time.sleep(0.5)
    assert set(Path("/tmp").glob("tutor-run-*")) - before == set()


def test_memory_cap_stops_an_allocation_the_machine_could_make(runner, tmp_path):
    # 4 GiB: more than the 1 GiB cap, far less than the machine's memory. With no cap this
    # allocation succeeds and the wrong answer would fail for another reason.
    src = "import torch\ndef double(x):\n    big = torch.empty(1 << 30, dtype=torch.float32)\n    return x * 2\n"
    v = check(runner, tmp_path, src, memory_limit_mb=1024)
    assert v.status in ("error", "crashed") and "memory" in v.reason.lower(), v


# -- verdicts learner code cannot bend -------------------------------------------------------


def test_forging_done_over_the_channel_is_not_a_pass(runner, tmp_path):
    src = """
    import os, socket
    from tutor.runner import wire
    for n in os.listdir('/proc/self/fd'):
        if int(n) > 2:
            try:
                socket.socket(fileno=os.dup(int(n))).sendall(wire.encode(("done",)))
            except OSError:
                pass
    def double(x):
        return x / 2
    """
    v = check(runner, tmp_path, src)
    assert v.status == "failed", v


def test_forging_done_and_exiting_is_not_a_pass(runner, tmp_path):
    src = """
    import os, socket
    from tutor.runner import wire
    for n in os.listdir('/proc/self/fd'):
        if int(n) > 2:
            try:
                socket.socket(fileno=os.dup(int(n))).sendall(wire.encode(("done",)))
            except OSError:
                pass
    os._exit(0)
    """
    assert check(runner, tmp_path, src).status != "passed"


def test_there_is_no_socket_file_to_connect_to(runner, tmp_path):
    src = """
    import os, glob
    found = glob.glob(os.path.join(os.environ.get('TMPDIR', '/tmp'), '..', '**', '*.sock'), recursive=True)
    assert not found, found
    def double(x):
        return x * 2
    """
    assert check(runner, tmp_path, src).status == "passed"


def test_a_pickled_payload_never_runs_in_the_judge(runner, tmp_path):
    marker = tmp_path / "pwned"
    src = f"""
    import os, pickle, socket, struct
    class Boom:
        def __reduce__(self):
            return (open, ({str(marker)!r}, "w"))
    data = pickle.dumps(("done", Boom()))
    for n in os.listdir('/proc/self/fd'):
        if int(n) > 2:
            try:
                socket.socket(fileno=os.dup(int(n))).sendall(struct.pack('!I', len(data)) + data)
            except OSError:
                pass
    def double(x):
        return x / 2
    """
    v = check(runner, tmp_path, src)
    assert v.status == "failed" and not marker.exists()


def test_writing_a_verdict_into_any_ancestor_pipe_is_impossible(runner, tmp_path):
    src = """
    import json, os
    wrote = []
    pid = os.getpid()
    while pid > 1:
        with open(f'/proc/{pid}/stat') as f:
            pid = int(f.read().split(')')[-1].split()[1])
        for fd in range(0, 12):
            try:
                with open(f'/proc/{pid}/fd/{fd}', 'w') as out:
                    for rid in ('r1', 'r2'):
                        out.write(json.dumps({"kind": "verdict", "id": rid,
                                              "verdict": {"status": "passed", "reason": "forged"}}) + "\\n")
                    wrote.append((pid, fd))
            except OSError:
                pass
    print('wrote to', wrote)
    def double(x):
        return x / 2
    """
    v = check(runner, tmp_path, src)
    assert v.status == "failed" and v.reason != "forged", v
    assert check(runner, tmp_path, "def double(x):\n    return x * 2\n").status == "passed"


def test_patching_context_expect_close_is_caught(runner, tmp_path):
    src = """
    from tutor.runner import checker_api as checking
    _orig = checking.Context.expect_close
    def lenient(self, name, actual, expected, **kw):
        return _orig(self, name, expected, expected, **kw)
    checking.Context.expect_close = lenient
    def double(x):
        return x / 2
    """
    v = check(runner, tmp_path, src)
    assert v.status == "failed" and "replaced part of the checker" in v.reason, v


def test_wrapping_the_channel_found_through_gc_is_caught(runner, tmp_path):
    src = """
    import gc
    from tutor.runner import checker_api as checking
    def double(x):
        for obj in gc.get_objects():
            if isinstance(obj, checking.Context):
                inner = obj.channel
                class Echo:
                    def __getattr__(self, k):
                        return getattr(inner, k)
                    def expect(self, kind, name, actual, expected, options):
                        return inner.expect(kind, name, expected, expected, options)
                obj.channel = Echo()
        return x / 2
    """
    v = check(runner, tmp_path, src)
    assert v.status == "failed", v


def test_muting_the_channel_is_not_a_pass(runner, tmp_path):
    src = """
    import gc
    from tutor.runner import subject
    def double(x):
        for obj in gc.get_objects():
            if isinstance(obj, subject.SocketChannel):
                obj.expect = lambda *a, **k: None
        return x / 2
    """
    assert check(runner, tmp_path, src).status == "failed"


def test_replacing_torch_sigmoid_with_a_fake_from_module_torch_is_caught(runner, tmp_path):
    src = """
    import torch
    def fake(x):
        return x / 2
    fake.__module__ = "torch"
    torch.sigmoid = fake
    def sigmoid(x):
        return torch.sigmoid(x)
    """
    v = check(runner, tmp_path, src, fixture="sig")
    assert v.status == "failed" and "output" in v.reason, v


def test_a_torch_function_mode_left_entered_is_caught(runner, tmp_path):
    src = """
    import torch
    from torch.overrides import TorchFunctionMode
    class Halve(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is torch.sigmoid:
                return args[0] / 2
            return func(*args, **(kwargs or {}))
    Halve().__enter__()
    def sigmoid(x):
        return torch.sigmoid(x)
    """
    v = check(runner, tmp_path, src, fixture="sig")
    assert v.status == "failed" and "output" in v.reason, v


def test_a_dispatcher_override_of_the_aten_kernel_is_caught(runner, tmp_path):
    src = """
    import torch
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("sigmoid", lambda x: (x + 1) * 0.25, "CPU")
    def sigmoid(x):
        return torch.sigmoid(x)
    """
    v = check(runner, tmp_path, src, fixture="sig")
    assert v.status == "failed" and "output" in v.reason, v


def test_swapping_a_torch_functions_code_is_caught(runner, tmp_path):
    src = """
    import torch.nn.functional as F
    def halve(input, negative_slope=0.01, inplace=False):
        return input / 2
    F.leaky_relu.__code__ = halve.__code__
    def leaky(x):
        return F.leaky_relu(x, 0.1)
    """
    v = check(runner, tmp_path, src, fixture="leaky")
    assert v.status == "failed" and "output" in v.reason, v


def test_rebinding_the_checkers_torch_global_is_caught(runner, tmp_path):
    src = """
    import sys, types, torch
    class Fake(types.ModuleType):
        def __getattr__(self, k):
            if k == "sigmoid":
                return lambda x: x / 2
            return getattr(torch, k)
    def sigmoid(x):
        sys.modules["tutor_checker"].torch = Fake("torch")
        return x / 2
    """
    assert check(runner, tmp_path, src, fixture="sig").status == "failed"


def test_rewriting_the_checker_file_on_disk_changes_nothing(runner, tmp_path):
    lesson = tmp_path / "course"
    lesson.mkdir()
    for name in ("double_check.py", "double_solution.py"):
        (lesson / name).write_text((FIX / name).read_text())
    src = f"""
    import pathlib
    pathlib.Path({str(lesson / "double_check.py")!r}).write_text("def check(ctx):\\n    pass\\n")
    pathlib.Path({str(lesson / "double_solution.py")!r}).write_text("def double(x):\\n    return x / 2\\n")
    def double(x):
        return x / 2
    """
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(src))
    req = RunRequest(
        exercise="t",
        code=str(path),
        solution=str(lesson / "double_solution.py"),
        checker=str(lesson / "double_check.py"),
        timeout=20,
        seed=3,
    )
    assert runner.run(req).status == "failed"
    req2 = RunRequest(
        exercise="t",
        code=str(path),
        solution=str(lesson / "double_solution.py"),
        checker=str(lesson / "double_check.py"),
        timeout=20,
        seed=3,
    )
    assert runner.run(req2).status == "failed"  # the copies read before learner code ran


def test_the_tamper_tripwire_can_be_disabled_only_by_failing(runner, tmp_path):
    src = """
    from tutor.runner import checker_api as checking
    checking.Context.tampered = lambda self: ""
    checking._changed = lambda a, b: []
    def double(x):
        return x / 2
    """
    assert check(runner, tmp_path, src).status == "failed"


def test_a_torchrun_rank_sending_done_twice_is_not_a_pass(runner, tmp_path):
    pytest.importorskip("torch.distributed")
    src = """
    import os, socket
    from tutor.runner import wire
    def double(x):
        return x / 2
    for n in os.listdir('/proc/self/fd'):
        if int(n) > 2:
            try:
                s = socket.socket(fileno=os.dup(int(n)))
                s.sendall(wire.encode(("done",)) * 2)
            except OSError:
                pass
    """
    v = check(runner, tmp_path, src, processes=2, timeout=90)
    assert v.status != "passed", v


def test_distributed_ranks_see_torchruns_environment_and_nothing_of_the_supervisor(runner, tmp_path):
    # The CPU ranks are forked from the warm runner, not started by torchrun: each still sees
    # torchrun's variables, and no descriptor but stdio and its own channel to the judge.
    src = """
    import os, socket
    want = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
    missing = sorted(want - set(os.environ))
    sockets = 0
    for n in os.listdir('/proc/self/fd'):
        try:
            if int(n) > 2 and os.readlink(f'/proc/self/fd/{n}').startswith('socket:'):
                sockets += 1
        except OSError:
            pass
    def double(x):
        if missing or os.environ["WORLD_SIZE"] != "2" or sockets != 1:
            return x * 3
        return x * 2
    """
    v = check(runner, tmp_path, src, processes=2, timeout=90)
    assert v.status == "passed", (v.reason, v.output)


def test_a_rank_that_dies_without_a_word_is_an_error_naming_the_distributed_run(runner, tmp_path):
    src = """
    import os
    if os.environ.get("RANK") == "1":
        os._exit(3)
    def double(x):
        return x * 2
    """
    v = check(runner, tmp_path, src, processes=2, timeout=90)
    assert v.status in ("error", "failed") and "distributed run" in v.reason, (v.status, v.reason)


@pytest.mark.slow
def test_a_torchrun_rank_that_clears_its_death_signal_does_not_survive(runner, tmp_path):
    marker = tmp_path / "rank-child.pid"
    src = f"""
    import ctypes, os, time
    def double(x):
        return x * 2
    if int(os.environ.get("RANK", "0")) == 1 and os.fork() == 0:
        ctypes.CDLL(None).prctl(1, 0)
        os.setsid()
        open({str(marker)!r}, "w").write(str(os.getpid()))
        time.sleep(300)
        os._exit(0)
    """
    check(runner, tmp_path, src, processes=2, timeout=90)
    assert marker.exists(), "rank 1 never started its child"
    pid = int(marker.read_text())
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_two_run_design_latency_stays_small(runner, tmp_path):
    """Not a benchmark: the reference run happens in parallel, so a small check stays well
    under a second (bench/bench_runner.py measures the real figure)."""
    check(runner, tmp_path, "def double(x):\n    return x * 2\n")
    start = time.monotonic()
    assert check(runner, tmp_path, "def double(x):\n    return x * 2\n").status == "passed"
    assert time.monotonic() - start < 10


# -- progress records only what the judge saw ------------------------------------------------


def test_a_progress_row_written_by_learner_code_does_not_count(runner, tmp_path):
    home = tmp_path / "home"
    progress = Progress(home)
    src = f"""
    import sqlite3, time
    db = sqlite3.connect({str(home / "progress.sqlite3")!r})
    db.execute("INSERT OR REPLACE INTO exercise (exercise, status, hints_used, updated_at, passed_at) "
               "VALUES ('sigmoid', 'passed', 0, ?, ?)", (time.time(), time.time()))
    db.commit()
    def double(x):
        return x / 2
    """
    assert check(runner, tmp_path, src).status == "failed"
    assert Progress(home).exercise("sigmoid").status != "passed"
    progress.record_run("sigmoid", "passed")
    assert Progress(home).exercise("sigmoid").status == "passed"


def test_learner_code_cannot_import_the_progress_module(runner, tmp_path):
    src = "import tutor.progress\ndef double(x):\n    return x * 2\n"
    v = check(runner, tmp_path, src)
    assert v.status == "error" and "tutor.progress" in v.reason


# -- the reference run is kept for the same sources and seed ---------------------------------


def test_a_reference_run_is_reused_for_the_same_seed_and_never_for_another(tmp_path, monkeypatch):
    log = tmp_path / "reflog"
    monkeypatch.setenv("TUTOR_TEST_REFLOG", str(log))
    with Runner(device="cpu") as r:

        def run(source: str, seed: int) -> Verdict:
            path = tmp_path / f"learner{seed}.py"
            path.write_text(source)
            return r.run(
                RunRequest(
                    exercise="t",
                    code=str(path),
                    solution=str(FIX / "logged_solution.py"),
                    checker=str(FIX / "logged_check.py"),
                    timeout=30,
                    seed=seed,
                )
            )

        def reference_runs() -> int:
            return log.read_text().split().count("reference_solution")

        assert run("def double(x):\n    return x * 2\n", 5).status == "passed"
        assert reference_runs() == 1
        assert run("def double(x):\n    return x * 2\n", 5).status == "passed"
        wrong = run("def double(x):\n    return x * 2.5\n", 5)
        assert wrong.status == "failed" and "output" in wrong.reason
        assert reference_runs() == 1  # both answered from the kept reference run
        assert run("def double(x):\n    return x * 2\n", 6).status == "passed"
        assert reference_runs() == 2  # another seed, another reference run
