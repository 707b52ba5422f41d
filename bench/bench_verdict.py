"""Warm verdict latency: how long a small check takes once the runner is warm.

    python bench/bench_verdict.py [--runs 15] [--busy N] [--exercise sigmoid]

Every check runs twice (the reference run and the learner's run, in parallel), so this is the
figure the two-run design must keep under 0.3 s. `--busy N` starts N spinning processes first.
Prints the median and the 90th percentile of the wall time from `Runner.check` to its verdict.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.course import load_course  # noqa: E402
from tutor.runner.client import Runner  # noqa: E402


def _spin() -> None:
    while True:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--busy", type=int, default=0, help="spinning processes to start first")
    ap.add_argument("--exercise", default="sigmoid")
    ap.add_argument(
        "--seed",
        type=int,
        default=None,
        help="one fixed seed: after the first run the reference run is kept, so this "
        "measures the learner's side alone (the cost of the two-run design is the "
        "difference)",
    )
    ap.add_argument(
        "--settle",
        type=float,
        default=6.0,
        help="seconds to let the runner finish its deferred imports first (the app "
        "starts it at launch, while the learner reads)",
    )
    args = ap.parse_args()
    exercise = load_course().exercise(args.exercise)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for p in spinners:
        p.start()
    try:
        with Runner(device="cpu") as runner:
            runner.start()
            runner.check(exercise, exercise.solution, seed=args.seed)  # warm-up
            time.sleep(args.settle)
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                verdict = runner.check(exercise, exercise.solution, seed=args.seed)
                times.append(time.perf_counter() - start)
                assert verdict.status == "passed", verdict.reason
    finally:
        for p in spinners:
            p.terminate()
    times.sort()
    p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
    print(
        f"{args.exercise}: warm verdict median {statistics.median(times) * 1000:.0f} ms, "
        f"p90 {p90 * 1000:.0f} ms over {args.runs} runs (busy loops: {args.busy})"
    )


if __name__ == "__main__":
    main()
