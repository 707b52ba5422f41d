"""Learner code that misbehaves must get the right verdict, and the runner must stay usable."""

from __future__ import annotations

import time
from pathlib import Path


from tutor.runner.client import Runner
from tutor.runner.protocol import RunRequest, Verdict

FIX = Path(__file__).parent / "runner_fixtures"


def run(runner: Runner, tmp_path: Path, source: str, timeout: float = 20, **kw) -> Verdict:
    path = tmp_path / "learner.py"
    path.write_text(source)
    req = RunRequest(
        exercise="test/double",
        code=str(path),
        solution=str(FIX / "double_solution.py"),
        checker=str(FIX / "double_check.py"),
        timeout=timeout,
        seed=123,
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
