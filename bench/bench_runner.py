"""Runner benchmarks (run on demand: `python bench/bench_runner.py`).

1. Verdict latency for a small exercise through the warm runner (after the first run), next to
   the cold figure: a fresh `python -c "import torch"` measured in the same run.
2. The reference solution timed against itself: speedup 1.00 +- 0.05 across 5 checks.
3. Peak memory: allocating a known 100 MB tensor reports 100 MB +- 5%.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.course import load_course  # noqa: E402
from tutor import paths  # noqa: E402
from tutor.runner.client import Runner  # noqa: E402
from tutor.runner.protocol import RunRequest  # noqa: E402

MEMORY_CHECK = '''
import torch
def check(ctx):
    m = ctx.memory(lambda: ctx.learner.alloc(), lambda: ctx.reference.alloc())
    ctx.figure("mb", m.learner_bytes / 1e6)
'''
ALLOC = "import torch\ndef alloc():\n    x = torch.ones(25_000_000)  # 100 MB of float32\n    return float(x[0])\n"


def cold_import_s() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def main() -> None:
    course = load_course()
    sigmoid = course.exercise("sigmoid")
    with Runner(cache_dir=Path(tempfile.mkdtemp())) as runner:
        t0 = time.perf_counter()
        runner.start()
        start_s = time.perf_counter() - t0
        first = time.perf_counter()
        runner.check(sigmoid, sigmoid.stub)
        first_s = time.perf_counter() - first
        warm = []
        for _ in range(10):
            t = time.perf_counter()
            v = runner.check(sigmoid, sigmoid.stub)  # the stub: a small exercise's verdict
            warm.append(time.perf_counter() - t)
            assert v.status == "error"
        passing = []
        for _ in range(5):
            t = time.perf_counter()
            v = runner.check(sigmoid, sigmoid.solution)
            passing.append(time.perf_counter() - t)
            assert v.passed, v.reason
        colds = [cold_import_s() for _ in range(3)]
        print("== verdict latency (sigmoid, chapter 2)")
        print(f"runner start (import torch once):        {start_s:.3f} s")
        print(f"first verdict after start:                {first_s:.3f} s")
        print(f"warm verdict, stub (median of 10):        {statistics.median(warm):.3f} s  (target < 0.3 s)")
        print(f"warm verdict, solution incl. 5 trials and gradcheck (median of 5): "
              f"{statistics.median(passing):.3f} s")
        print(f"cold `python -c 'import torch'` (median of 3): {statistics.median(colds):.3f} s")

        print("\n== reference timed against itself (5 checks each; target 1.00 +- 0.05)")
        for ex_id in ("cpp-softmax", "func-maml", "balanced-sampler"):
            ex = course.exercise(ex_id)
            ratios = []
            for _ in range(5):
                v = runner.check(ex, ex.solution)
                timings = [f for f in v.figures.values() if isinstance(f, dict) and "speedup" in f]
                if v.passed and timings:
                    ratios.append(timings[0]["speedup"])
            if ratios:
                print(f"{ex_id:22s} speedups: {', '.join(f'{r:.3f}' for r in ratios)}  "
                      f"worst |1-x| = {max(abs(1 - r) for r in ratios):.3f}")

        with tempfile.TemporaryDirectory() as d:
            chk, sol = Path(d) / "chk.py", Path(d) / "alloc.py"
            chk.write_text(MEMORY_CHECK)
            sol.write_text(ALLOC)
            v = runner.run(RunRequest(exercise="bench/alloc", code=str(sol), solution=str(sol),
                                      checker=str(chk), timeout=60, seed=0))
            mb = v.figures.get("mb")
            print("\n== peak memory of a 100 MB allocation (target 100 MB +- 5%)")
            print(f"reported: {mb:.2f} MB  ({v.status})")

        ex = course.exercise("memory-checkpoint")
        v = runner.check(ex, ex.solution)
        f = v.figures
        print("\n== activation checkpointing of a deep stack (chapter 4 reference solution)")
        print(f"peak without checkpointing: {f['peak_MiB_without_checkpointing']:.2f} MiB; "
              f"with: {f['memory']['learner_bytes'] / 2**20:.2f} MiB; "
              f"saved: {f['memory_saved_pct']['yours']:.1f}%  ({v.status})")


if __name__ == "__main__":
    main()
