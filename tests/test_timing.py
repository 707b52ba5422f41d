"""Timing figures (tutor.runner.timing): one statistic for the shown times and the speedup, the
trust rule on recorded timings, and the clock the measurement picks."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from tutor.cli.check import summary_figures
from tutor.runner import timing

RECORDED = json.loads((Path(__file__).parent / "timing_recorded.json").read_text())["cases"]


def _summary(case: dict) -> timing.Timing:
    return timing.summarize(
        case["learner"],
        case["reference"],
        number=case["number"],
        device="cpu",
        clock=case["clock"],
        busy_share=case["busy_share"],
    )


@pytest.mark.parametrize("case", RECORDED, ids=lambda c: f"{c['exercise']}-{c['clock']}")
def test_shown_speedup_is_the_ratio_of_the_shown_times(case: dict) -> None:
    d = _summary(case).as_dict()
    assert d["speedup"] == pytest.approx(d["reference_s"] / d["learner_s"], rel=1e-12)
    # ... and so is what the CLI table prints, within its rounding; never a number when noisy.
    time_col, speed_col, _ = summary_figures({"time": d})
    assert speed_col == ("too noisy to call" if d["noisy"] else f"{d['speedup']:.2f}x")
    assert " vs " in time_col
    # Shown times are the estimator's, not some other statistic of the samples.
    assert d["learner_s"] == timing.estimate(case["learner"])
    assert d["reference_s"] == timing.estimate(case["reference"])


@pytest.mark.parametrize("case", [c for c in RECORDED if c["clock"] == timing.THREAD_CPU], ids=lambda c: c["exercise"])
def test_thread_cpu_time_of_the_same_code_reads_one_on_a_loaded_machine(case: dict) -> None:
    t = _summary(case)
    assert not t.noisy, t.noise_reason
    assert abs(t.speedup - 1) <= 0.05
    lo, hi = t.interval
    assert lo <= t.speedup <= hi


def test_wall_clock_on_a_loaded_machine_is_too_noisy_to_call_with_a_reason() -> None:
    walls = [_summary(c) for c in RECORDED if c["clock"] == timing.WALL]
    noisy = [t for t in walls if t.noisy]
    # The same samples a wall clock gave: mostly untrustworthy, and said so in words.
    assert len(noisy) >= len(walls) - 1
    for t in noisy:
        d = t.as_dict()
        assert d["noisy"] is True
        assert "machine is busy" in d["noise_reason"] and "%" in d["noise_reason"]


def test_estimator_ignores_the_slow_half_and_the_luckiest_tenth() -> None:
    fast = [1.0] * 6 + [0.5] + [3.0, 9.0, 50.0]  # 10 samples: one lucky, three disturbed
    assert timing.estimate(fast) == pytest.approx(1.0)
    assert timing.estimate([2.0]) == 2.0


def test_a_real_difference_is_called_and_too_few_rounds_is_not() -> None:
    a = [1.0 + 0.01 * (i % 5) for i in range(40)]
    b = [2.0 + 0.02 * (i % 7) for i in range(40)]
    t = timing.summarize(a, b, number=1, device="cpu", clock=timing.THREAD_CPU)
    assert not t.noisy and t.speedup == pytest.approx(2.0, rel=0.02)
    few = timing.summarize([1.0, 1.1], [1.0, 0.9], number=1, device="cpu", clock=timing.THREAD_CPU)
    assert few.noisy and "too few rounds" in (few.noise_reason or "")


def test_interleaved_uses_thread_cpu_time_and_restores_threads_and_gc() -> None:
    x = torch.randn(64, 64)
    before = torch.get_num_threads()
    t = timing.interleaved(lambda: x @ x, lambda: x @ x, device=torch.device("cpu"), budget_s=0.05)
    assert t.clock == timing.THREAD_CPU
    assert t.learner_s > 0 and t.reference_s > 0 and math.isfinite(t.speedup)
    assert t.rounds >= 7
    assert torch.get_num_threads() == before
    import gc

    assert gc.isenabled()


@pytest.mark.skipif(not Path("/proc/thread-self/schedstat").exists(), reason="needs Linux schedstat")
def test_work_on_another_thread_is_timed_with_the_wall_clock_minus_cpu_waits() -> None:
    def elsewhere() -> None:  # the caller only waits: thread CPU time would see nothing
        th = threading.Thread(target=lambda: sum(range(20_000)))
        th.start()
        th.join()

    def sleeper() -> None:
        time.sleep(0.001)

    for fn in (elsewhere, sleeper):
        t = timing.interleaved(fn, fn, device=torch.device("cpu"), budget_s=0.03)
        assert t.clock == timing.WALL_MINUS_WAIT
        assert t.learner_s > 0.0005 if fn is sleeper else t.learner_s > 0


def test_timing_lives_in_the_runner_without_importing_checking() -> None:
    from tutor.runner import checker_api as checking

    assert checking.Timing is timing.Timing and checking.median_iqr is timing.median_iqr
    code = "import sys, tutor.runner.timing; assert 'tutor.runner.checker_api' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])


def test_a_wide_interval_far_from_one_still_calls_the_comparison() -> None:
    a = [1.0 + 0.6 * ((i * 7) % 11) / 10 for i in range(40)]  # up to +60% on one side
    b = [5.0 + 0.1 * (i % 3) for i in range(40)]
    t = timing.summarize(a, b, number=1, device="cpu", clock=timing.THREAD_CPU)
    lo, hi = t.interval
    assert hi - lo > 0.08 * t.speedup  # too wide for a precise figure...
    assert not t.noisy and lo > 1.15  # ...but clearly faster: called, with its interval
