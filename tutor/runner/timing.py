"""Side-by-side timing of learner and reference code (runner processes only).

A learner's laptop is never idle, so every choice here is about figures that hold while a
browser, an IDE or a build compete for the CPU.

Clock (CPU). On a loaded machine the wall clock mostly measures how long the scheduler kept
the work waiting, not the work. During timing torch's intra-op pool is pinned to one thread,
so a call's work runs on the calling thread, and that thread's CPU time
(CLOCK_THREAD_CPUTIME_ID, `time.thread_time`) counts exactly the work: it stops while the
thread is preempted, so two busy-loop processes per core change it by a few per cent where
they change the wall clock by 3x and more. One thread also removes the barrier waits of a
parallel region, where one preempted worker stalls all the others. Every block also reads the
process CPU time and, on Linux, the thread's run-queue delay (/proc/thread-self/schedstat).
When other threads did part of the work (process CPU > thread CPU: code compiled for several
threads, a C++ pool of its own) or the thread sat blocked (waiting for another process or a
device), thread CPU time would miss work, so both sides fall back to "wall minus run-queue
wait": the wall clock with the time spent waiting for a CPU removed (plain wall where the OS
does not say). One clock is used for both sides of a comparison, always.

Rounds. Short blocks (a few ms, enough calls for the clock to resolve), alternating A-B-B-A
so drift (thermal, turbo, a build that starts) hits both sides alike; Python's GC is paused
during blocks. Many short rounds beat a few long ones: interference comes in bursts, and a
burst spoils one short block instead of a long one.

Statistic. Interference only ever adds time, so each side's figure is the mean of its blocks
between the 10th and the 50th percentile: like the minimum it ignores the disturbed blocks,
unlike the minimum it does not hang on one lucky sample. On recorded self-against-self runs
(load 5-8 on 2 CPUs) it stayed within 4% where the minimum erred by up to 18%, the median by 5%
and the same statistic on the wall clock by 21%. Both shown times come from it and the speedup is their ratio, so
`reference_s / learner_s == speedup` exactly (the old median of per-round ratios could
disagree with the shown medians).

Memory. While timing, glibc keeps freed memory mapped (mallopt), so that no call pays page
faults the other side's call did not: see `_quiet`.

Trust. The 90% interval of the speedup comes from a bootstrap over rounds. While it is wider
than +-2.5%, more rounds are measured (up to three times the budget); if it is still wider than
+-4% the figure carries a `noise_reason` (shown as "too noisy to call"), never a confident
number, unless the whole interval lies beyond 1.15x either way: then the comparison is decided
and the figure keeps its `interval`. The bar sits inside the +-5% the figures must hold to,
because a bootstrap over a few dozen rounds is a little optimistic. The share of time the
thread waited for a CPU (`busy_share`) says whether the machine was the cause.

CUDA: CUDA events around each call with synchronisation and an L2 flush in between, so no call
finds its data cached by the last; the same estimator and trust rule.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import random
import resource
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import torch

ESTIMATOR = "mean of the 10th-50th percentile"
THREAD_CPU, WALL_MINUS_WAIT, WALL, CUDA_EVENTS = "thread CPU time", "wall minus CPU wait", "wall", "CUDA events"

_BLOCK_S = 0.003  # one block of calls: long enough for the clock, short enough for many rounds
_L2_FLUSH_BYTES = 256 * 1024 * 1024
_REMEASURE_HALF_WIDTH = 0.025  # keep measuring while the 90% interval is wider than +-2.5%
_NOISY_HALF_WIDTH = 0.04  # still wider than +-4% at the end: too noisy to call (the target is +-5%)
_OTHER_WORK_SHARE = 0.10  # other threads / blocked time above this share: not single-threaded
_BOOTSTRAP = 300
_RUSAGE_THREAD = getattr(resource, "RUSAGE_THREAD", None)
_CLEAR = 1.15  # an interval wholly above 1.15x (or below 1/1.15) decides the comparison
_ROUNDS = 30  # rounds to aim for when the budget alone gives fewer


@dataclass
class Timing:
    """Per-call times of learner and reference, measured interleaved in the same process."""

    learner_s: float
    reference_s: float
    learner_iqr_s: float
    reference_iqr_s: float
    rounds: int
    number: int
    device: str
    clock: str = WALL
    noise_reason: str | None = None
    busy_share: float = 0.0  # share of the measuring time the thread waited for a CPU
    interval: tuple[float, float] | None = None  # 90% interval of the speedup

    @property
    def speedup(self) -> float:
        """How many times faster the learner's code is than the reference (>1 is faster):
        the ratio of the two shown times, so the figure and the times always agree."""
        return self.reference_s / self.learner_s if self.learner_s > 0 else math.inf

    @property
    def noisy(self) -> bool:
        """True when the speedup cannot be trusted (`noise_reason` says why)."""
        return self.noise_reason is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "learner_s": self.learner_s,
            "reference_s": self.reference_s,
            "learner_iqr_s": self.learner_iqr_s,
            "reference_iqr_s": self.reference_iqr_s,
            "speedup": self.speedup,
            "noisy": self.noisy,
            "noise_reason": self.noise_reason,
            "rounds": self.rounds,
            "number": self.number,
            "device": self.device,
            "clock": self.clock,
            "estimator": ESTIMATOR,
            "busy_share": round(self.busy_share, 3),
            "interval": list(self.interval) if self.interval else None,
        }


def median_iqr(samples: Sequence[float]) -> tuple[float, float]:
    qs = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 else [samples[0]] * 3
    return qs[1], qs[2] - qs[0]


def estimate(samples: Sequence[float]) -> float:
    """The mean of the samples between the 10th and the 50th percentile: the time a call takes
    when nothing else gets in its way. The slower half is where interference lands; the
    fastest tenth is dropped so that one lucky block cannot decide."""
    ordered = sorted(samples)
    lo = len(ordered) // 10
    hi = max(lo + 1, len(ordered) // 2)
    return math.fsum(ordered[lo:hi]) / (hi - lo)


def speedup_interval(learner: Sequence[float], reference: Sequence[float], n: int = _BOOTSTRAP) -> tuple[float, float]:
    """90% bootstrap interval of estimate(reference) / estimate(learner), resampling whole
    rounds (both sides of a round together). Deterministic for given samples."""
    pairs = list(zip(learner, reference))
    if len(pairs) < 4:
        return 0.0, math.inf
    rng = random.Random(len(pairs))
    ratios = []
    for _ in range(n):
        pick = [pairs[rng.randrange(len(pairs))] for _ in pairs]
        a = estimate([p[0] for p in pick])
        ratios.append(estimate([p[1] for p in pick]) / a if a > 0 else math.inf)
    ratios.sort()
    return ratios[int(0.05 * n)], ratios[int(0.95 * n) - 1]


def summarize(
    learner: Sequence[float],
    reference: Sequence[float],
    *,
    number: int,
    device: str,
    clock: str,
    busy_share: float = 0.0,
    final: bool = True,
) -> Timing:
    """One Timing from per-call samples (one per block and side): the shown times, their
    spread, the speedup (their ratio) and whether it can be trusted."""
    lo, hi = speedup_interval(learner, reference)
    a, b = estimate(learner), estimate(reference)
    speedup = b / a if a > 0 else math.inf
    reason = None
    half = _half_width(lo, hi, speedup)
    # A wide interval that lies wholly beyond "about the same" still calls the comparison
    # (vmap 5x faster than the loop, give or take 10%): the number keeps its interval.
    decided = lo >= _CLEAR or 0 < hi <= 1 / _CLEAR
    if final and half > _NOISY_HALF_WIDTH and not decided:
        reason = _noise_reason(half, busy_share, len(learner))
    return Timing(
        a,
        b,
        median_iqr(learner)[1],
        median_iqr(reference)[1],
        len(learner),
        number,
        device,
        clock,
        reason,
        busy_share,
        (round(lo, 4), round(hi, 4)),
    )


def _half_width(lo: float, hi: float, speedup: float) -> float:
    if not (math.isfinite(lo) and math.isfinite(hi)) or speedup <= 0 or not math.isfinite(speedup):
        return math.inf
    return max(speedup - lo, hi - speedup) / speedup


def _noise_reason(half: float, busy_share: float, rounds: int) -> str:
    spread = "too few rounds to tell" if not math.isfinite(half) else f"+-{100 * half:.0f}% between rounds"
    if busy_share >= 0.2:
        return (
            f"the machine is busy: this check waited for a CPU {100 * busy_share:.0f}% of the "
            f"time and the times varied {spread} ({rounds} rounds); close other programs and re-run"
        )
    return f"the times varied {spread} ({rounds} rounds); re-run to get a figure"


# -- clocks -------------------------------------------------------------------------------------


class _Clocks:
    """Wall, thread CPU, process CPU and (Linux) run-queue delay, read together in ns."""

    def __init__(self) -> None:
        self._fd: int | None = None
        try:  # this thread's scheduler statistics: "on-cpu-ns wait-on-runqueue-ns timeslices"
            self._fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
            self._delay()
        except (OSError, ValueError, IndexError):
            self.close()

    @property
    def has_delay(self) -> bool:
        return self._fd is not None

    def _delay(self) -> int:
        if self._fd is None:
            return 0
        return int(os.pread(self._fd, 128, 0).split()[1])

    def switches(self) -> int:
        """Voluntary context switches of this thread so far: a thread that sleeps, joins or
        waits for I/O gives up the CPU itself; a preempted or hypervisor-stolen one does not."""
        if _RUSAGE_THREAD is None:
            return 0
        return resource.getrusage(_RUSAGE_THREAD).ru_nvcsw

    def stamp(self) -> tuple[int, int, int, int]:
        """(wall, thread CPU, process CPU, run-queue delay). The delay is read before and after
        the clocks; if the thread was preempted in between, read again: a wait counted in one
        clock and not in the other would corrupt "wall minus wait"."""
        for _ in range(5):
            d = self._delay()
            w = time.perf_counter_ns()
            t = time.thread_time_ns()
            p = time.process_time_ns()
            if self._delay() == d:
                break
        return w, t, p, d

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class _Block:
    """One block's clock deltas (ns) and its number of calls."""

    wall: int
    thread: int
    process: int
    delay: int
    number: int
    voluntary: int = 0  # voluntary context switches during the block

    def per_call(self, clock: str) -> float:
        ns = {THREAD_CPU: self.thread, WALL_MINUS_WAIT: self.wall - self.delay}.get(clock, self.wall)
        return max(ns, 1) / self.number / 1e9


def _choose_clock(blocks: list[_Block], has_delay: bool) -> str:
    """Thread CPU time when this thread did all the work; else wall minus waiting for a CPU."""
    thread = sum(b.thread for b in blocks) or 1
    others = sum(b.process - b.thread for b in blocks) / thread
    blocked = sum(b.wall - b.delay - b.thread for b in blocks) / thread if has_delay else 0.0
    # Off-CPU time that is neither run-queue wait nor the thread's own choice is time the
    # hypervisor took (steal): thread CPU time already leaves it out, so it is no reason to
    # switch clocks. Blocking on other work gives up the CPU: about one switch per block.
    if sum(b.voluntary for b in blocks) < len(blocks) / 2:
        blocked = 0.0
    if others <= _OTHER_WORK_SHARE and blocked <= _OTHER_WORK_SHARE:
        return THREAD_CPU
    return WALL_MINUS_WAIT if has_delay else WALL


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc mallopt parameters
_MALLOC_DEFAULT = 128 * 1024


def _mallopt(trim: int, mmap: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap) and libc.mallopt(_M_TRIM_THRESHOLD, trim))
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to tune
        return False


@contextlib.contextmanager
def _quiet(threads: int | None) -> Iterator[None]:
    """Pin torch's intra-op threads, pause the GC and keep freed memory mapped while timing;
    restore all three after. By default glibc returns a freed large block to the OS and the
    next call page-faults it back in; whether a call pays those faults depends on the heap's
    state, which can differ between the two sides for a whole run (measured: 25% on the
    balanced sampler, the same code on both sides). Keeping memory mapped makes every call
    start from the same warm heap, like the caching allocator does on CUDA."""
    before = torch.get_num_threads()
    gc_was = gc.isenabled()
    gc.collect()
    if threads:
        torch.set_num_threads(threads)
    tuned = _mallopt(1 << 30, 32 * 1024 * 1024)  # 32 MiB: glibc's largest mmap threshold
    gc.disable()
    try:
        yield
    finally:
        if gc_was:
            gc.enable()
        if tuned:
            _mallopt(_MALLOC_DEFAULT, _MALLOC_DEFAULT)
        if threads:
            torch.set_num_threads(before)


# -- CPU ----------------------------------------------------------------------------------------


def _block(fn: Callable[[], Any], number: int, clocks: _Clocks) -> _Block:
    v0 = clocks.switches()
    w0, t0, p0, d0 = clocks.stamp()
    for _ in range(number):
        fn()
    w1, t1, p1, d1 = clocks.stamp()
    return _Block(w1 - w0, t1 - t0, p1 - p0, d1 - d0, number, clocks.switches() - v0)


def interleaved(
    learner: Callable[[], Any],
    reference: Callable[[], Any],
    *,
    device: torch.device,
    budget_s: float = 1.0,
    min_rounds: int = 7,
    warmup: int = 2,
    threads: int | None = 1,
) -> Timing:
    """Time `learner` against `reference` (see the module docstring). `budget_s` is measured
    time (both sides together); a wide spread extends it up to three times."""
    if device.type == "cuda":
        return _cuda(learner, reference, budget_s=budget_s, min_rounds=min_rounds, warmup=warmup)
    clocks = _Clocks()
    try:
        with _quiet(threads):
            return _cpu(learner, reference, clocks, budget_s=budget_s, min_rounds=min_rounds, warmup=warmup)
    finally:
        clocks.close()


def _cpu(
    learner: Callable[[], Any],
    reference: Callable[[], Any],
    clocks: _Clocks,
    *,
    budget_s: float,
    min_rounds: int,
    warmup: int,
) -> Timing:
    for _ in range(warmup):
        learner()
        reference()
    once_a = _block(learner, 1, clocks)
    once_b = _block(reference, 1, clocks)
    clock = _choose_clock([once_a, once_b], clocks.has_delay)
    t_a, t_b = once_a.per_call(clock), once_b.per_call(clock)
    # One block size for both sides so a round does the same number of calls per side.
    number = max(1, min(10_000, int(_BLOCK_S / max(min(t_a, t_b), 1e-7))))
    a: list[_Block] = []
    b: list[_Block] = []
    measured = 0.0
    wall_start = time.perf_counter()

    def one_round() -> float:
        first, second = (learner, a), (reference, b)
        if len(a) % 2:  # A-B, then B-A
            first, second = second, first
        x = _block(first[0], number, clocks)
        first[1].append(x)
        y = _block(second[0], number, clocks)
        second[1].append(y)
        return (x.per_call(clock) + y.per_call(clock)) * number

    # At least the budget; and at least _ROUNDS rounds while that costs under three budgets:
    # with fewer, one disturbed round moves the trimmed mean (the bootstrap cannot see that).
    while len(a) < min_rounds or measured < budget_s or (len(a) < _ROUNDS and measured < 3 * budget_s):
        measured += one_round()
        if time.perf_counter() - wall_start > 20 * budget_s and len(a) >= min_rounds:
            break  # a machine this busy: stop and let the trust rule speak
    clock = _choose_clock(a + b, clocks.has_delay)  # decided on all blocks, not on one call
    while True:
        result = _summary(a, b, number, clock, final=False)
        lo, hi = result.interval or (0.0, math.inf)
        if (
            _half_width(lo, hi, result.speedup) <= _REMEASURE_HALF_WIDTH
            or measured >= 3 * budget_s
            or time.perf_counter() - wall_start > 20 * budget_s
            or len(a) >= 2000
        ):
            break
        for _ in range(max(4, len(a) // 4)):
            measured += one_round()
    return _summary(a, b, number, clock, final=True)


def _summary(a: list[_Block], b: list[_Block], number: int, clock: str, final: bool) -> Timing:
    wall = sum(x.wall for x in a + b) or 1
    busy = sum(x.delay for x in a + b) / wall
    return summarize(
        [x.per_call(clock) for x in a],
        [x.per_call(clock) for x in b],
        number=number,
        device="cpu",
        clock=clock,
        busy_share=busy,
        final=final,
    )


# -- CUDA ---------------------------------------------------------------------------------------


def _cuda(
    learner: Callable[[], Any], reference: Callable[[], Any], *, budget_s: float, min_rounds: int, warmup: int
) -> Timing:
    flush = torch.empty(_L2_FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")

    def timed(fn: Callable[[], Any]) -> float:
        flush.zero_()  # evict L2 so every call starts cold
        start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        return float(start.elapsed_time(end)) / 1000.0

    for _ in range(warmup):
        learner()
        reference()
    torch.cuda.synchronize()
    once = timed(learner) + timed(reference)
    rounds = max(min_rounds, min(500, int(budget_s / max(once, 1e-6))))
    a: list[float] = []
    b: list[float] = []

    def one_round() -> None:
        if len(a) % 2 == 0:
            a.append(timed(learner))
            b.append(timed(reference))
        else:
            b.append(timed(reference))
            a.append(timed(learner))

    with _quiet(None):
        for _ in range(rounds):
            one_round()
        while len(a) < 3 * rounds:
            t = summarize(a, b, number=1, device="cuda", clock=CUDA_EVENTS, final=False)
            lo, hi = t.interval or (0.0, math.inf)
            if _half_width(lo, hi, t.speedup) <= _REMEASURE_HALF_WIDTH:
                break
            for _ in range(max(4, rounds // 4)):
                one_round()
    return summarize(a, b, number=1, device="cuda", clock=CUDA_EVENTS)
