"""The call contract's cost on a check: the checker of an exercise run in this process with a
channel that only counts, once with the contract on and once paused, interleaved; the best of N
runs of each (robust to a busy machine).

    python bench/bench_contract.py [--exercise sigmoid] [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class _Counting:
    measures_speed = False  # like the reference run: no timing loops

    def __init__(self) -> None:
        self.observations = 0

    def quiet(self) -> None:
        pass

    def expect(self, *args: object) -> None:
        self.observations += 1

    def figure(self, name: str, value: object) -> None:
        pass

    def phase(self, text: str, **info: object) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exercise", default="sigmoid")
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()

    import torch

    from tutor.runner import checker_api
    from tutor.course import load_course
    from tutor.runner.subject import import_source

    ex = load_course().exercise(args.exercise)
    checker = import_source("tutor_checker", ex.checker, ex.checker.read_text(encoding="utf-8"))
    solution = ex.solution.read_text(encoding="utf-8")
    tmp = Path(tempfile.mkdtemp(prefix="tutor-contract-bench-"))
    os.chdir(tmp)

    def once(contract: bool) -> tuple[float, int]:
        torch.manual_seed(0)
        module = import_source("reference_solution", ex.solution, solution)
        channel = _Counting()
        ctx = checker_api.Context(learner=module, reference=module, channel=channel, seed=1, device="cpu", tmpdir=tmp)
        if not contract:
            ctx._contract.paused += 1
        start = time.perf_counter()
        checker.check(ctx)
        ctx.finish()
        return time.perf_counter() - start, channel.observations

    once(True), once(False)  # warm caches and lazy imports
    on, off = [], []
    for _ in range(args.runs):
        on.append(once(True))
        off.append(once(False))
    best_on, best_off = min(t for t, _ in on), min(t for t, _ in off)
    print(
        f"{args.exercise}: check {best_off * 1000:.1f} ms without the contract, {best_on * 1000:.1f} ms with it "
        f"(+{(best_on - best_off) * 1000:.1f} ms; {on[0][1]} observations with, {off[0][1]} without)"
    )


if __name__ == "__main__":
    main()
