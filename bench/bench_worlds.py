"""How long chapter 12's distributed checks take (run on demand: `python bench/bench_worlds.py`).

For each exercise (default: the four that run at several world sizes) and each of the first
`--seeds` pool seeds, the reference solution is checked twice through the real runner: first
with both roles running (what a learner's first check of that seed costs), then again with the
reference run kept by the warm server (what a second check, and every chapter-test mutant,
costs), each on a fresh warm server. Prints the seconds, the machine's load average, and the
world sizes. `--first` also runs each exercise at its first world size alone, alternating with
the full run on the same seed, so the added time is a difference measured under the same load.

`--tree PATH` imports tutor and the course from another checkout (e.g. `--tree /work/main` to
measure the checks as they were before a change), so before and after come from this one script.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT = ("ddp-accum", "pipeline", "fsdp2-step", "dcp-reshard")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercises", nargs="*", default=list(DEFAULT))
    parser.add_argument("--seeds", type=int, default=1, help="pool seeds per exercise (default 1)")
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parents[1]), help="checkout to measure")
    parser.add_argument("--first", action="store_true", help="also run each exercise at its first size only")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    sys.path.insert(0, args.tree)
    os.environ.pop("PYTHONUNBUFFERED", None)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    from tutor.course import load_course
    from tutor.runner.client import Runner
    from tutor.seeds import seed_pool

    course = load_course()
    rows: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as cache:
        for ex_id in args.exercises:
            exercise = course.exercise(ex_id)
            worlds = list(getattr(exercise.needs, "worlds", ()) or (exercise.needs.processes,))
            configs = [worlds[:1], worlds] if args.first and len(worlds) > 1 else [worlds]
            for seed in seed_pool(ex_id)[: args.seeds]:
                for sizes in configs:
                    # a fresh server for each: its first check runs the reference at every size
                    with Runner(cache_dir=Path(cache), device="cpu") as runner:
                        runner.start()
                        row: dict[str, Any] = {"exercise": ex_id, "seed": seed, "worlds": sizes}
                        for label in ("cold_s", "cached_s"):
                            request = runner.request_for(exercise, exercise.solution, seed=seed)
                            if hasattr(request, "worlds"):
                                request.worlds = sizes if len(sizes) > 1 else []
                            start = time.monotonic()
                            v = runner.run(request)
                            row[label] = round(time.monotonic() - start, 2)
                            row["status"] = v.status
                            if v.status != "passed":
                                row["reason"] = v.reason
                        row["load"] = round(os.getloadavg()[0], 1)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min); {os.cpu_count()} CPUs")
    for ex_id in args.exercises:
        for sizes in sorted({tuple(r["worlds"]) for r in rows if r["exercise"] == ex_id}):
            mine = [r for r in rows if r["exercise"] == ex_id and tuple(r["worlds"]) == sizes]
            cold = statistics.mean(r["cold_s"] for r in mine)
            cached = statistics.mean(r["cached_s"] for r in mine)
            print(f"{ex_id:14} processes {list(sizes)}: first check {cold:6.1f} s, reference kept {cached:6.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "load": [load_before, load_after]}, indent=1))
    return 0 if all(r["status"] == "passed" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
