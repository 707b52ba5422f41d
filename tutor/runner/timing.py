"""Side-by-side timing of learner and reference code (runner processes only).

CPU: blocked timing in the style of torch.utils.benchmark: each measurement is a block of
`number` calls long enough (~10 ms) for the clock to resolve, rounds alternate A-B-B-A to
cancel drift, and medians with IQR summarise them. CUDA: CUDA events around each call with
synchronisation and an L2 flush in between, so no call finds its data cached by the last.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import torch

from tutor.checking import Timing, median_iqr

_BLOCK_S = 0.01
_L2_FLUSH_BYTES = 256 * 1024 * 1024


def _paired(learner: list[float], reference: list[float]) -> float:
    ratios = [r / l for l, r in zip(learner, reference) if l > 0]
    return statistics.median(ratios) if ratios else float("inf")


def _block_size(fn: Callable[[], Any]) -> tuple[int, float]:
    """How many calls make a block of about _BLOCK_S, and one call's rough time."""
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    number = max(1, min(10_000, int(_BLOCK_S / max(once, 1e-7))))
    return number, once


def _cpu_block(fn: Callable[[], Any], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def interleaved(learner: Callable[[], Any], reference: Callable[[], Any], *, device: torch.device,
                budget_s: float = 1.0, min_rounds: int = 7, warmup: int = 2) -> Timing:
    if device.type == "cuda":
        return _cuda(learner, reference, budget_s=budget_s, min_rounds=min_rounds, warmup=warmup)
    for _ in range(warmup):
        learner()
        reference()
    n_a, t_a = _block_size(learner)
    n_b, t_b = _block_size(reference)
    # One block count for both so each round does the same amount of work per side.
    number = max(1, min(n_a, n_b))
    per_round = 2 * number * (t_a + t_b)
    rounds = max(min_rounds, min(200, int(budget_s / max(per_round, 1e-9))))
    a: list[float] = []
    b: list[float] = []
    start = time.perf_counter()

    def one_round(r: int) -> None:
        if r % 2 == 0:
            a.append(_cpu_block(learner, number))
            b.append(_cpu_block(reference, number))
        else:
            b.append(_cpu_block(reference, number))
            a.append(_cpu_block(learner, number))

    for r in range(rounds):
        one_round(r)
    # Adaptive, like blocked_autorange: while the spread is large, keep measuring (up to three
    # times the budget) so that a slow call's handful of samples does not decide the speedup.
    while _spread(a, b) > 0.05 and time.perf_counter() - start < 3 * budget_s and rounds < 400:
        one_round(rounds)
        rounds += 1
    ma, ia = median_iqr(a)
    mb, ib = median_iqr(b)
    return Timing(ma, mb, ia, ib, rounds, number, "cpu", _paired(a, b))


def _spread(a: list[float], b: list[float]) -> float:
    """The larger relative IQR of the two sides."""
    (ma, ia), (mb, ib) = median_iqr(a), median_iqr(b)
    return max(ia / ma if ma else 0.0, ib / mb if mb else 0.0)


def _cuda(learner: Callable[[], Any], reference: Callable[[], Any], *, budget_s: float,
          min_rounds: int, warmup: int) -> Timing:
    flush = torch.empty(_L2_FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")

    def timed(fn: Callable[[], Any]) -> float:
        flush.zero_()  # evict L2 so every call starts cold
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1000.0

    for _ in range(warmup):
        learner()
        reference()
    torch.cuda.synchronize()
    once = timed(learner) + timed(reference)
    rounds = max(min_rounds, min(500, int(budget_s / max(once, 1e-6))))
    a: list[float] = []
    b: list[float] = []
    for r in range(rounds):
        if r % 2 == 0:
            a.append(timed(learner))
            b.append(timed(reference))
        else:
            b.append(timed(reference))
            a.append(timed(learner))
    del flush
    ma, ia = median_iqr(a)
    mb, ib = median_iqr(b)
    return Timing(ma, mb, ia, ib, rounds, 1, "cuda", _paired(a, b))
