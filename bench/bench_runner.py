"""Runner benchmarks (run on demand: `python bench/bench_runner.py [--busy | --both]`).

1. The load the figures below were measured at: the load average, and the share of time a
   probe thread waited for a CPU (the machine may be shared; "idle" is rarely idle).
2. First check: runner start (the warm server importing torch and the runner) and the first
   verdict on `sigmoid`, then warm verdict latency; `python -c "import torch"` for comparison.
3. Every timed exercise's reference solution timed against itself, through the real runner:
   each `ctx.time(a, b)` of the exercise's checker also times `a` against `a` (the same code on
   both sides), `--repeats` times. Target: every speedup 1.00 +- 0.05, or flagged as too noisy.
4. Peak memory: allocating a known 100 MB tensor reports 100 MB +- 5%, and the checkpointing
   exercise's figures with their timeline.

`--busy` starts two busy-loop processes per core first (a 2x oversubscribed machine, like a
laptop running a build) and stops them at the end; `--both` runs the idle pass, then the busy one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.course import Course, Exercise, load_course  # noqa: E402
from tutor.runner.client import Runner  # noqa: E402
from tutor.runner.protocol import RunRequest  # noqa: E402

MEMORY_CHECK = """
import torch
def check(ctx):
    m = ctx.memory(lambda: ctx.learner.alloc(), lambda: ctx.reference.alloc())
    ctx.figure("mb", m.learner_bytes / 1e6)
"""
ALLOC = "import torch\ndef alloc():\n    x = torch.ones(25_000_000)  # 100 MB of float32\n    return float(x[0])\n"

# A checker that runs the exercise's own checker, and for each ctx.time(a, b) also times a
# against itself (figure "self: NAME") before the real comparison.
SELF_TIMING = '''
import importlib.util
import sys

sys.path.insert(0, {folder!r})
_spec = importlib.util.spec_from_file_location("tutor_bench_real_checker", {path!r})
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)


class _SelfTiming:
    """The checker's ctx with one change: each time(a, b) also times a against a. A view of
    ctx, not a patch of it (the runner refuses a ctx whose methods were replaced)."""

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)

    def time(self, learner, reference, *, name="time", **kw):
        self._ctx.time(learner, learner, name="self: " + name, **kw)
        return self._ctx.time(learner, reference, name=name, **kw)


def check(ctx):
    _real.check(_SelfTiming(ctx))
'''


def cold_import_s() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def cpu_wait_share(seconds: float = 1.0) -> float | None:
    """Share of `seconds` of busy work during which this thread waited for a CPU (Linux)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            d0 = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        pass
    with open("/proc/thread-self/schedstat") as f:
        d1 = int(f.read().split()[1])
    return (d1 - d0) / 1e9 / (time.perf_counter() - start)


def load_line() -> str:
    avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    share = cpu_wait_share()
    probe = f"; a probe thread waited for a CPU {100 * share:.0f}% of the time" if share is not None else ""
    return f"load average {avg:.2f} on {os.cpu_count()} CPUs{probe}"


@contextlib.contextmanager
def oversubscribed(on: bool) -> Iterator[int]:
    """Two busy-loop processes per core while the block runs (stopped by their pids)."""
    procs: list[subprocess.Popen[bytes]] = []
    if on:
        for _ in range(2 * (os.cpu_count() or 1)):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        time.sleep(1.0)
    try:
        yield len(procs)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()


def timed_exercises(course: Course, device: str) -> list[Exercise]:
    found = []
    for ex in course.exercises:
        if "ctx.time(" not in ex.checker.read_text():
            continue
        if ex.needs.device == "cuda" and device != "cuda":
            continue
        found.append(ex)
    return found


def self_timings(
    runner: Runner, ex: Exercise, repeats: int, device: str, reported: dict[str, list[dict[str, Any]]] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """figure name -> one timing dict per repeat (the exercise's reference against itself);
    the checker's own timing figures (learner = the reference solution) go to `reported`."""
    out: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as d:
        chk = Path(d) / "self_timing_check.py"
        chk.write_text(SELF_TIMING.format(folder=str(ex.checker.parent), path=str(ex.checker)))
        for seed in range(repeats):
            request = RunRequest(
                exercise=ex.key,
                code=str(ex.solution),
                solution=str(ex.solution),
                checker=str(chk),
                timeout=4 * ex.timeout,
                device=device,
                processes=ex.needs.processes,
                seed=seed,
                memory_limit_mb=8192 if device == "cpu" else None,
                cache_dir=str(runner.cache_dir) if runner.cache_dir else None,
            )
            v = runner.run(request)
            for name, fig in v.figures.items():
                if name.startswith("self: ") and isinstance(fig, dict) and "speedup" in fig:
                    out.setdefault(name[len("self: ") :], []).append(fig)
                elif reported is not None and isinstance(fig, dict) and "speedup" in fig:
                    reported.setdefault(f"{ex.id}|{name}", []).append(fig)
            if not any(name.startswith("self: ") for name in v.figures):
                print(f"  {ex.id}: no timing came back ({v.status}: {v.reason})", flush=True)
    return out


def print_self_table(runner: Runner, course: Course, repeats: int, device: str, only: list[str]) -> None:
    print(
        f"\n== reference timed against itself, {repeats} checks each (target 1.00 +- 0.05; "
        f"N = flagged too noisy to call)",
        flush=True,
    )
    print(f"{'exercise':22s} {'figure':26s} {'speedups':48s} worst  clock", flush=True)
    worst_all = 0.0
    reported: dict[str, list[dict[str, Any]]] = {}
    for ex in timed_exercises(course, device):
        if only and ex.id not in only:
            continue
        for name, figs in self_timings(runner, ex, repeats, device, reported).items():
            cells = [f"{f['speedup']:.3f}" + ("N" if f.get("noisy") else " ") for f in figs]
            trusted = [f["speedup"] for f in figs if not f.get("noisy")]
            worst = max((abs(1 - s) for s in trusted), default=float("nan"))
            worst_all = max(worst_all, worst) if trusted else worst_all
            clock = ",".join(sorted({str(f.get("clock")) for f in figs}))
            print(f"{ex.id:22s} {name[:26]:26s} {' '.join(cells):48s} {worst:.3f}  {clock}", flush=True)
            for f in figs:
                if f.get("noise_reason"):
                    print(f"{'':49s}noisy: {f['noise_reason']}", flush=True)
    print(f"worst |1 - speedup| over trusted figures: {worst_all:.3f}", flush=True)
    print(
        "\n== the checkers' own figures with the reference solution as the learner's code "
        "(median speedup of the repeats; what the figure compares)"
    )
    for key, figs in reported.items():
        ex_id, name = key.split("|", 1)
        med = statistics.median(f["speedup"] for f in figs)
        noisy = sum(bool(f.get("noisy")) for f in figs)
        print(
            f"{ex_id:22s} {name[:26]:26s} {med:8.3f}x  noisy {noisy}/{len(figs)}  {figs[0].get('compares', '')}",
            flush=True,
        )


def latency(runner: Runner, course: Course) -> None:
    sigmoid = course.exercise("sigmoid")
    t0 = time.perf_counter()
    info = runner.start()
    start_s = time.perf_counter() - t0
    first = time.perf_counter()
    v = runner.check(sigmoid, sigmoid.solution)  # right after "ready", as a quick learner would
    first_s = time.perf_counter() - first
    assert v.passed, v.reason
    warm = []
    for _ in range(5):
        t = time.perf_counter()
        v = runner.check(sigmoid, sigmoid.stub)  # the stub: a small exercise's verdict
        warm.append(time.perf_counter() - t)
        assert v.status == "error", v.reason
    passing = []
    for _ in range(3):
        t = time.perf_counter()
        v = runner.check(sigmoid, sigmoid.solution)
        passing.append(time.perf_counter() - t)
        assert v.passed, v.reason
    colds = [cold_import_s() for _ in range(2)]
    print("== first check (sigmoid, chapter 2)", flush=True)
    print(
        f"runner start (server imports torch and the runner): {start_s:.2f} s  "
        f"(server's own import: {info.import_s:.2f} s; target < 3 s idle)"
    )
    print(f"first verdict (solution) after start:     {first_s:.3f} s")
    print(f"runner start -> first verdict:            {start_s + first_s:.2f} s")
    print(f"warm verdict, stub (median of 5):         {statistics.median(warm):.3f} s  (target < 0.3 s)")
    print(f"warm verdict, solution (median of 3):     {statistics.median(passing):.3f} s")
    print(f"cold `python -c 'import torch'` (median of 2): {statistics.median(colds):.2f} s", flush=True)


def memory(runner: Runner, course: Course) -> None:
    with tempfile.TemporaryDirectory() as d:
        chk, sol = Path(d) / "chk.py", Path(d) / "alloc.py"
        chk.write_text(MEMORY_CHECK)
        sol.write_text(ALLOC)
        v = runner.run(
            RunRequest(exercise="bench/alloc", code=str(sol), solution=str(sol), checker=str(chk), timeout=120, seed=0)
        )
        mb = v.figures.get("mb")
        print("\n== peak memory of a 100 MB allocation (target 100 MB +- 5%)")
        print(f"reported: {mb:.2f} MB  ({v.status})" if mb is not None else f"no figure ({v.status}: {v.reason})")
    ex = course.exercise("memory-checkpoint")
    v = runner.check(ex, ex.solution)
    f = v.figures
    m = f.get("memory", {})
    print("\n== activation checkpointing of a deep stack (chapter 4 reference solution)")
    if "peak_MiB_without_checkpointing" in f and m:
        line = m.get("timeline", {}).get("learner", [])
        print(
            f"peak without checkpointing: {f['peak_MiB_without_checkpointing']:.2f} MiB; "
            f"with: {m['learner_bytes'] / 2**20:.2f} MiB; saved: {f['memory_saved_pct']['yours']:.1f}%; "
            f"timeline: {len(line)} points  ({v.status})"
        )
    else:
        print(f"no figures ({v.status}: {v.reason})")
    print(flush=True)


def one_pass(course: Course, args: argparse.Namespace, busy: bool) -> None:
    with oversubscribed(busy) as n:
        title = f"BUSY: {n} busy-loop processes on {os.cpu_count()} CPUs" if busy else "IDLE (no added load)"
        print(f"\n######## {title}; {load_line()}", flush=True)
        cache = Path(os.environ.get("TUTOR_CACHE") or Path(tempfile.gettempdir()) / "tutor-bench-cache")
        with Runner(cache_dir=cache, device=args.device) as runner:
            if not args.no_latency:
                latency(runner, course)
            print_self_table(runner, course, args.repeats, "cuda" if args.device == "cuda" else "cpu", args.only)
            if not args.no_memory:
                memory(runner, course)
        print(f"at the end: {load_line()}", flush=True)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--busy", action="store_true", help="2 busy-loop processes per core during the run")
    mode.add_argument("--both", action="store_true", help="an idle pass, then a busy pass")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", nargs="*", default=[], metavar="EXERCISE")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--no-latency", action="store_true")
    p.add_argument("--no-memory", action="store_true")
    args = p.parse_args(argv)
    course = load_course()
    passes = [False, True] if args.both else [args.busy]
    for busy in passes:
        one_pass(course, args, busy)


if __name__ == "__main__":
    main()
