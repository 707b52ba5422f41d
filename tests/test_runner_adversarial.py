"""Learner code that misbehaves must get the right verdict, and the runner must stay usable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tutor.runner.client import Runner
from tutor.runner.protocol import RunRequest, Verdict

from tests.test_runner_hardening import alive

FIX = Path(__file__).parent / "runner_fixtures"


def run(
    runner: Runner, tmp_path: Path, source: str, timeout: float = 20, fixture: str = "double", seed: int = 123, **kw
) -> Verdict:
    path = tmp_path / "learner.py"
    path.write_text(source)
    req = RunRequest(
        exercise=f"test/{fixture}",
        code=str(path),
        solution=str(FIX / f"{fixture}_solution.py"),
        checker=str(FIX / f"{fixture}_check.py"),
        timeout=timeout,
        seed=seed,
        **kw,
    )
    return runner.run(req)


GOOD = "import torch\n\ndef double(x):\n    return x + x\n"


def test_correct_code_passes_with_timing(runner, tmp_path):
    v = run(runner, tmp_path, GOOD)
    assert v.status == "passed", v
    assert v.figures["time"]["speedup"] > 0


def test_wrong_answer_fails_with_index_and_values(runner, tmp_path):
    v = run(runner, tmp_path, "def double(x):\n    return x * 3\n")
    assert v.status == "failed"
    assert v.reason.startswith("output: max abs error") and "at index" in v.reason
    assert v.details and "expected" in v.details[0]


def test_wrong_shape_is_named(runner, tmp_path):
    v = run(runner, tmp_path, "def double(x):\n    return (x * 2)[:, :4]\n")
    assert v.status == "failed"
    assert "shape (8, 4) != expected (8, 5)" in v.reason


def test_exception_shows_learner_frames_not_harness(runner, tmp_path):
    v = run(runner, tmp_path, "def helper(x):\n    return x.nope()\n\ndef double(x):\n    return helper(x)\n")
    assert v.status == "error"
    assert "AttributeError" in v.reason
    assert any("your code, line 2, in helper" in d for d in v.details)
    assert not any("tutor/" in d or "checking.py" in d for d in v.details)


def test_infinite_loop_times_out_and_runner_still_works(runner, tmp_path):
    start = time.monotonic()
    v = run(runner, tmp_path, "def double(x):\n    while True:\n        pass\n", timeout=2)
    assert v.status == "timeout" and "did not finish within 2 s" in v.reason
    assert time.monotonic() - start < 10
    assert run(runner, tmp_path, GOOD).status == "passed"


def test_segfault_is_reported_with_signal(runner, tmp_path):
    v = run(runner, tmp_path, "import ctypes\n\ndef double(x):\n    ctypes.string_at(0)\n")
    assert v.status == "crashed"
    assert "SIGSEGV" in v.reason


def test_early_os_exit_zero_is_not_a_pass(runner, tmp_path):
    v = run(runner, tmp_path, "import os\n\ndef double(x):\n    os._exit(0)\n")
    assert v.status == "error"
    assert "exited (exit code 0) before the check finished" in v.reason


def test_sys_exit_is_not_a_pass(runner, tmp_path):
    v = run(runner, tmp_path, "import sys\n\ndef double(x):\n    sys.exit(0)\n")
    assert v.status == "error" and "sys.exit(0)" in v.reason


def test_fake_pass_on_stdout_is_ignored(runner, tmp_path):
    src = (
        "print('PASS'); print('{\"status\": \"passed\"}')\n"
        "def double(x):\n    print('all checks passed')\n    return x * 3\n"
    )
    v = run(runner, tmp_path, src)
    assert v.status == "failed"
    assert "PASS" in v.output  # the output is shown, not trusted


def test_monkeypatched_comparisons_cannot_make_wrong_answer_pass(runner, tmp_path):
    src = (
        "import torch\n"
        "torch.allclose = lambda *a, **k: True\n"
        "torch.equal = lambda *a, **k: True\n"
        "torch.testing.assert_close = lambda *a, **k: None\n"
        "def double(x):\n    return x * 3\n"
    )
    v = run(runner, tmp_path, src)
    assert v.status == "failed" and "max abs error" in v.reason


def test_cached_result_cannot_pass_fresh_inputs(runner, tmp_path):
    src = (
        "_cache = None\n"
        "def double(x):\n    global _cache\n    if _cache is None:\n        _cache = x * 2\n    return _cache\n"
    )
    v = run(runner, tmp_path, src)
    assert v.status == "failed"


def test_input_mutation_is_detected(runner, tmp_path):
    v = run(runner, tmp_path, "def double(x):\n    return x.mul_(2)\n")
    assert v.status == "failed"
    # The call contract sees it first (ctx.no_mutation would say "changed its input").
    assert "`x` was changed in place" in v.reason and "left a change behind" in v.reason


def test_huge_output_is_capped_and_run_finishes(runner, tmp_path):
    src = (
        "import sys\n_line = 'x' * 1023 + '\\n'\n"
        "for _ in range(100 * 1024):\n    sys.stdout.write(_line)\n"
        "def double(x):\n    return x * 2\n"
    )
    v = run(runner, tmp_path, src, timeout=60)
    assert v.status == "passed", v.reason
    assert v.output_truncated
    assert len(v.output) <= 64 * 1024


def test_huge_allocation_is_an_error_not_a_dead_machine(runner, tmp_path):
    # 8 GiB: over the 2 GiB cap, under what the machine could give, so without the cap this
    # allocation would succeed and the check would pass.
    src = "import torch\n\ndef double(x):\n    big = torch.empty(1 << 31, dtype=torch.float32)\n    return x * 2\n"
    v = run(runner, tmp_path, src, memory_limit_mb=2048)
    assert v.status in ("error", "crashed")
    assert "memory" in v.reason.lower() or "alloc" in v.reason.lower()


def test_cancel_stops_a_run(runner, tmp_path):
    import threading

    path = tmp_path / "loop.py"
    path.write_text("def double(x):\n    while True:\n        pass\n")
    req = RunRequest(
        exercise="t",
        code=str(path),
        solution=str(FIX / "double_solution.py"),
        checker=str(FIX / "double_check.py"),
        timeout=60,
        seed=1,
    )
    threading.Timer(0.5, runner.cancel).start()
    start = time.monotonic()
    v = runner.run(req)
    assert v.status == "cancelled"
    assert time.monotonic() - start < 5
    assert run(runner, tmp_path, GOOD).status == "passed"


def test_no_state_leaks_between_runs(runner, tmp_path):
    leak = "import torch\ntorch.Tensor.leaked_marker = 1\ndef double(x):\n    return x * 2\n"
    assert run(runner, tmp_path, leak).status == "passed"
    probe = "import torch\ndef double(x):\n    assert not hasattr(torch.Tensor, 'leaked_marker')\n    return x * 2\n"
    assert run(runner, tmp_path, probe).status == "passed"


def test_patching_torch_to_bend_expected_values_is_caught(runner, tmp_path):
    # `x * 2` in the checker now returns x in the learner's process; the expected value comes
    # from the reference run, where torch is untouched.
    src = "import torch\ntorch.Tensor.__mul__ = lambda a, b: a\ndef double(x):\n    return x.clone()\n"
    v = run(runner, tmp_path, src)
    assert v.status == "failed"
    assert v.reason.startswith("output: max abs error")


def test_a_plain_program_runs_and_its_output_comes_back(runner, tmp_path):
    ok = tmp_path / "ok.py"
    ok.write_text("import torch\nprint('sum:', int(torch.arange(5).sum()))\n")
    v = runner.run_script(ok)
    assert v.status == "passed" and v.reason == "the program ran to the end"
    assert "sum: 10" in v.output
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\nraise ValueError('boom')\n")
    v = runner.run_script(bad)
    assert v.status == "error" and "ValueError: boom" in v.reason
    assert any("your code, line 2" in d for d in v.details)


# -- issue 25: honest code in odd places, a stuck server -------------------------------------

TUTOR = [str(Path(sys.executable).with_name("tutor"))]


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
    return subprocess.run(
        [*TUTOR, "--workspace", str(home), *args],
        capture_output=True,
        text=True,
        timeout=240,
        env={**base, **(env or {})},
    )


def test_a_server_stopped_mid_run_is_replaced_in_seconds_not_after_the_timeout(tmp_path):
    with Runner(device="cpu", grace_s=3) as r:
        r.start()
        pid = r.server_pid
        assert pid
        threading.Timer(0.5, lambda: os.kill(pid, signal.SIGSTOP)).start()
        start = time.monotonic()
        slow = "import time\ndef double(x):\n    time.sleep(2)\n    return x * 2\n"
        v = run(r, tmp_path, slow, timeout=60)
        assert time.monotonic() - start < 8, "waited for the exercise's 60 s timeout"
        assert v.status == "error" and "stopped answering" in v.reason
        time.sleep(0.2)
        assert not alive(pid), "the stopped server was left behind"
        assert run(r, tmp_path, GOOD).status == "passed"


def test_a_server_stopped_before_the_request_is_replaced_and_the_check_runs(tmp_path):
    with Runner(device="cpu", grace_s=3) as r:
        r.start()
        pid = r.server_pid
        assert pid
        os.kill(pid, signal.SIGSTOP)
        start = time.monotonic()
        v = run(r, tmp_path, GOOD, timeout=60)
        assert v.status == "passed", v.reason  # the request was never taken: sent again
        assert time.monotonic() - start < 30
        assert r.server_pid != pid and not alive(pid)


def test_an_unwritable_progress_store_still_gives_the_verdict_and_json(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "progress.sqlite3").symlink_to("/dev/full")  # every write fails: a full disk
    done = _cli(home, "check", "sigmoid", "--solutions", "--json")
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert result["status"] == "passed"
    assert "progress will not be saved" in done.stderr and "Traceback" not in done.stderr
    (home / "progress.sqlite3").unlink()
    (home / "progress.sqlite3").mkdir()  # cannot be opened at all
    done = _cli(home, "check", "sigmoid", "--solutions")
    assert done.returncode == 0, done.stderr
    assert "passed" in done.stdout and "progress will not be saved" in done.stderr


def test_a_folder_at_the_learners_path_is_one_exercises_error_and_the_chapter_goes_on(tmp_path):
    home = tmp_path / "home"
    assert _cli(home, "path", "leaky-relu").returncode == 0
    target = home / "workspace" / "02-custom-autograd" / "leaky_relu.py"
    target.unlink()
    target.mkdir()
    done = _cli(home, "check", "chapter", "2", "--json")
    assert done.returncode == 1
    results = {r["exercise"]: r for r in json.loads(done.stdout)}
    assert len(results) == 5, "the chapter's check stopped at the folder"
    assert results["leaky-relu"]["status"] == "error"
    assert "is a folder, not your exercise file" in results["leaky-relu"]["reason"]
    assert results["sigmoid"]["status"] == "error" and "TODO" in results["sigmoid"]["reason"]  # the stub ran


HONEST_COMPILE = """\
import torch


@torch.compile
def _scale(s):
    return s * (1 - s)


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return grad_out * _scale(s)


def sigmoid(x):
    return Sigmoid.apply(x)
"""


@pytest.mark.slow
def test_an_honest_compile_inside_the_learners_code_passes_and_leaves_nothing_in_tmpdir(tmp_path):
    """A cold Inductor compile inside the learner's backward: the run says it is compiling,
    gets the time a cold compile needs, and writes nothing outside its folder and the cache
    (Inductor's precompiled headers used to land in $TMPDIR/torchinductor_<user>)."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    tmp.mkdir()
    assert _cli(home, "path", "sigmoid").returncode == 0
    (home / "workspace" / "02-custom-autograd" / "sigmoid.py").write_text(HONEST_COMPILE)
    done = _cli(home, "check", "sigmoid", "--json", env={"TMPDIR": str(tmp)})
    [result] = json.loads(done.stdout)
    assert result["status"] == "passed", result["reason"]
    assert list(tmp.iterdir()) == []
    headers = Path(os.environ.get("TUTOR_CACHE") or home / "cache") / "inductor" / "precompiled_headers"
    assert headers.is_dir() and any(headers.iterdir())


# -- issue 25: forwarding the expected value, re-sealing, the reference's folder ---------------

FORGING_SUBCLASS = """\
import sys
import torch


class Forger(torch.Tensor):
    # Reads the checker's frame and answers every op with the expected value: nothing patched.
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        f = sys._getframe(1)
        while f is not None and not (f.f_code.co_name == "check" and "x" in f.f_locals):
            f = f.f_back
        with torch._C.DisableTorchFunctionSubclass():
            if f is not None:
                args = tuple(f.f_locals["x"] * 2 if isinstance(a, Forger) else a for a in args)
            return func(*args, **(kwargs or {}))


def double(x):
    return (x / 2).as_subclass(Forger)
"""


def test_a_tensor_subclass_that_reads_the_callers_frame_cannot_forward_the_expected_value(runner, tmp_path):
    v = run(runner, tmp_path, FORGING_SUBCLASS)
    assert v.status == "failed", v.reason
    assert "output" in v.reason


RESEAL = """\
import gc
from tutor.runner import checker_api


done = []


def double(x):
    if done:
        return x / 2
    done.append(True)
    ctx = next(o for o in gc.get_objects() if isinstance(o, checker_api.Context))
    judge = ctx.expect_close
    ctx.expect_close = lambda name, actual, expected, **kw: judge(name, expected, expected, **kw)
    ctx._sealed = checker_api._seal(ctx)  # the old seal was this attribute
    ctx._tampered = lambda: ""  # and the check asks this one
    return x / 2
"""


def test_patching_the_channel_and_then_resealing_is_not_a_pass(runner, tmp_path):
    v = run(runner, tmp_path, RESEAL)
    assert v.status == "failed"
    assert "replaced part of the checker" in v.reason


def test_replacing_a_checker_helper_to_forward_the_expected_value_is_caught(runner, tmp_path):
    src = (
        "import sys\n"
        "checker = sys.modules['tutor_checker']\n"
        "def forward(ctx, name, out, want):\n"
        "    ctx.expect_close(name, want, want)\n"
        "checker.judge = forward\n"
        "def double(x):\n"
        "    return x / 2\n"
    )
    assert run(runner, tmp_path, GOOD, fixture="helped", seed=5).status == "passed"
    v = run(runner, tmp_path, src, fixture="helped", seed=5)
    assert v.status == "failed" and "tutor_checker.judge" in v.reason


def test_wrapping_the_wire_encoder_to_forward_the_expected_value_is_caught(runner, tmp_path):
    src = (
        "import sys\n"
        "import torch\n"
        "from tutor.runner import wire\n"
        "encode = wire.encode\n"
        "def forwarding(message):\n"
        "    if isinstance(message, tuple) and message and message[0] == 'obs':\n"
        "        f = sys._getframe(1)\n"
        "        while f is not None and not isinstance(f.f_locals.get('expected'), torch.Tensor):\n"
        "            f = f.f_back\n"
        "        if f is not None:\n"
        "            message = message[:3] + (f.f_locals['expected'],) + message[4:]\n"
        "    return encode(message)\n"
        "wire.encode = forwarding\n"
        "def double(x):\n"
        "    return x / 2\n"
    )
    v = run(runner, tmp_path, src)
    assert v.status == "failed" and "output" in v.reason


COPIES_THE_REFERENCE = """\
import os
import time
from pathlib import Path


def double(x):
    # Wait for the reference run's saved file next to this run's folder, and copy it.
    here = Path.cwd()
    for _ in range(100):
        for other in here.parent.iterdir():
            saved = other / "saved.txt"
            if other != here and saved.exists():
                (here / "saved.txt").write_text(saved.read_text())
                return x / 2
        time.sleep(0.05)
    return x / 2
"""


def test_the_reference_runs_folder_is_not_beside_the_learners(runner, tmp_path):
    """The saving checker: the function must write the doubled values to saved.txt in its
    working folder; the check reads the file back. A learner that copies the reference run's
    file instead of writing its own must not pass."""
    src = COPIES_THE_REFERENCE
    assert run(runner, tmp_path, SAVES, fixture="saving", seed=1).status == "passed"
    v = run(runner, tmp_path, src, fixture="saving", seed=2)  # a seed whose reference must run
    assert v.status == "failed", v.reason


SAVES = """\
from pathlib import Path


def double(x):
    Path("saved.txt").write_text(repr((x * 2).tolist()))
    return x * 2
"""


def test_the_learners_process_holds_no_cached_reference_results(runner, tmp_path):
    src = (
        "import gc, sys\n"
        "from tutor.runner import supervisor\n"
        "server = sys.modules.get('tutor.runner.server')\n"
        "cache = getattr(server, '_CACHE', None)\n"
        "assert cache is None or not cache.entries, 'the server cache is readable'\n"
        "sups = [o for o in gc.get_objects() if isinstance(o, supervisor.Supervisor)]\n"
        "assert all(s.cached_reference is None and 'reference' not in s.role_dirs for s in sups)\n"
        "def double(x):\n"
        "    return x * 2\n"
    )
    assert run(runner, tmp_path, GOOD).status == "passed"  # fills the server's cache for seed 123
    v = run(runner, tmp_path, src)
    assert v.status == "passed", v.reason


# -- issue 25: reasons that blame the right side -----------------------------------------------

SIBLING = """\
import os
import signal
import time


def _reference_pid():
    me, parent = os.getpid(), os.getppid()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                return int(entry)
    return None


def double(x):
    for _ in range(40):  # the reference run is in its 3 s call now
        pid = _reference_pid()
        if pid:
            os.kill(pid, signal.SIG)
            break
        time.sleep(0.05)
    time.sleep(30)
    return x * 2
"""


@pytest.mark.parametrize("sig, how", [("SIGSTOP", "stopped by SIGSTOP"), ("SIGKILL", "killed by signal 9")])
def test_a_learner_that_stops_or_kills_the_reference_run_is_told_so_in_seconds(runner, tmp_path, sig, how):
    start = time.monotonic()
    source = SIBLING.replace("signal.SIG)", f"signal.{sig})")
    v = run(runner, tmp_path, source, timeout=40, fixture="slowref", seed=991 if sig == "SIGSTOP" else 992)
    assert time.monotonic() - start < 15, "waited for the timeout"
    assert v.status == "error"
    assert "could not finish" in v.reason and how in v.reason
    assert "bug in the course" not in v.reason and "very busy" not in v.reason
