"""Run the blind mutants (tests/chapters/blind/) through the real runner and tabulate what the
checkers miss: `python bench/blind_sweep.py [--chapter N ...] [--seeds K] [--json out.json]`.

Each wrong_*.py must be rejected, each right_*.py must pass, on every seed tried (the first K
seeds of the exercise's pool). Run it from any checkout: it measures the tutor it imports."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLIND = ROOT / "tests" / "chapters" / "blind"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chapter", type=int, action="append")
    ap.add_argument("--exercise", action="append")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--blind", type=Path, default=BLIND, help="the folder of blind mutants")
    args = ap.parse_args()

    from tutor.course import load_course
    from tutor.runner.client import Runner

    try:
        from tutor.seeds import seed_pool
    except ImportError:  # a checkout from before `tutor dev mutate`: the same pool, written out

        def seed_pool(exercise_id: str, n: int = 3) -> list[int]:
            import zlib

            return [(zlib.crc32(exercise_id.encode("utf-8")) + k * 7_919) % 2**31 for k in range(n)]

    course = load_course()
    wanted = {e.id: c.number for c in course.chapters for e in c.exercises}
    runner = Runner(cache_dir=Path(tempfile.gettempdir()) / "tutor-blind-cache", device="cpu")
    rows = []
    try:
        for path in sorted(args.blind.glob("*/*.py")):
            exercise, kind = path.parent.name, path.name.split("_", 1)[0]
            if kind not in ("wrong", "right") or exercise not in wanted:
                continue
            if args.chapter and wanted[exercise] not in args.chapter:
                continue
            if args.exercise and exercise not in args.exercise:
                continue
            ex = course.exercise(exercise)
            if ex.needs.device == "cuda":
                continue
            for seed in seed_pool(exercise)[: args.seeds]:
                start = time.perf_counter()
                v = runner.check(ex, path, seed=seed)
                ok = (v.status != "passed") if kind == "wrong" else (v.status == "passed")
                row = {
                    "exercise": exercise,
                    "file": path.name,
                    "kind": kind,
                    "seed": seed,
                    "status": v.status,
                    "ok": ok,
                    "reason": v.reason[:300],
                    "seconds": round(time.perf_counter() - start, 2),
                }
                rows.append(row)
                mark = "ok  " if ok else "MISS"
                print(
                    f"{mark} {exercise}/{path.name} seed={seed} {v.status} {row['seconds']}s :: {v.reason[:160]}",
                    flush=True,
                )
    finally:
        runner.close()
    wrong = [r for r in rows if r["kind"] == "wrong"]
    right = [r for r in rows if r["kind"] == "right"]
    print(
        f"wrong passed: {sum(not r['ok'] for r in wrong)}/{len(wrong)}; "
        f"right rejected: {sum(not r['ok'] for r in right)}/{len(right)}"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
