"""Chapter 1's compile rows of issue 28: the compile-block check and the type-along passage that
calls torch.compile, cold (empty Inductor cache) and warm, through the real runner.

    python bench/bench_compile.py [--busy 2] [--warm 2] [--json out.json]

Rows, each the wall time from the request to the verdict:

- `passage cold`: the passage `compile-first-call` as the app runs it (`Runner.run_script`),
  in an empty cache folder (so Inductor also builds its precompiled header);
- `passage warm`: the same program again (Inductor's caches kept under the tutor cache);
- `compile-block cold`: the reference solution checked in another empty cache folder;
- `compile-block warm, new seed`: checks with the other seeds of the pool (a reference run each);
- `compile-block warm, same seed`: the last seed again (the server keeps that reference run).

Each check row also lists the times at which the check's phases began, which is where its time
goes. `--busy N` starts N spinning processes first (issue 28 reports idle and `--busy 2`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.course import Passage, load_course  # noqa: E402
from tutor.runner.client import Runner  # noqa: E402
from tutor.runner.protocol import Event, Verdict  # noqa: E402
from tutor.seeds import seed_pool  # noqa: E402

EXERCISE = "compile-block"
PASSAGE = "compile-first-call"


def _spin() -> None:
    while True:
        pass


def _passage_code() -> str:
    """The passage's code block, as the learner types it."""
    step = next(s for s in load_course().steps() if s.id == PASSAGE)
    assert isinstance(step, Passage)
    return step.code()


def _timed(run: Any) -> tuple[Verdict, float, list[tuple[float, str]]]:
    phases: list[tuple[float, str]] = []
    start = time.perf_counter()

    def on_event(event: Event) -> None:
        if event.kind == "phase":
            phases.append((round(time.perf_counter() - start, 2), event.text[:70]))

    verdict = run(on_event)
    return verdict, time.perf_counter() - start, phases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--busy", type=int, default=0, help="spinning processes to start first")
    ap.add_argument("--warm", type=int, default=2, help="warm checks with a new seed (at most 2)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    exercise = load_course().exercise(EXERCISE)
    seeds = seed_pool(EXERCISE)
    rows: list[dict[str, Any]] = []
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for p in spinners:
        p.start()

    def report(name: str, verdict: Verdict, wall: float, phases: list[tuple[float, str]]) -> None:
        rows.append({"row": name, "wall_s": round(wall, 2), "status": verdict.status, "phases": phases})
        print(f"{name:34} {wall:7.1f} s  {verdict.status}", flush=True)
        if not verdict.passed:
            print(f"    {verdict.reason[:300]}")
        for at, text in phases:
            print(f"    {at:7.1f} s  {text}")

    try:
        with tempfile.TemporaryDirectory(prefix="bench-compile-") as scratch:
            root = Path(scratch)
            script = root / "passage" / f"{PASSAGE}.py"
            script.parent.mkdir()
            script.write_text(_passage_code(), encoding="utf-8")
            with Runner(cache_dir=root / "cache-passage", device="cpu") as runner:
                runner.start()
                for name in ("passage cold", "passage warm"):
                    report(name, *_timed(lambda on: runner.run_script(script, on)))
            with Runner(cache_dir=root / "cache-check", device="cpu") as runner:
                runner.start()

                def check(seed: int) -> Any:
                    return lambda on: runner.check(exercise, exercise.solution, on, seed)

                report("compile-block cold", *_timed(check(seeds[0])))
                for seed in seeds[1 : 1 + args.warm]:
                    report("compile-block warm, new seed", *_timed(check(seed)))
                report("compile-block warm, same seed", *_timed(check(seeds[min(args.warm, len(seeds) - 1)])))
    finally:
        for p in spinners:
            p.terminate()
    if args.json:
        args.json.write_text(json.dumps({"busy": args.busy, "rows": rows}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
