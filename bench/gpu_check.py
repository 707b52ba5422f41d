"""GPU verification, called by bench/gpu_check.sh (see there). One run, under 10 minutes:

1. every exercise that can run on CUDA (needs device "cuda" or "any"): `tutor check ID --stubs`
   must not pass, `tutor check ID --solutions` must pass, both with `--device cuda`;
2. their timing figures (CUDA events) and memory figures (allocator peak), learner beside reference;
3. every memory exercise's reference solution run on CUDA through the runner (their lessons
   default to the CPU), so the allocator's peak and timeline are seen on the device too;
4. the reference timed against itself (bench_runner's self-timing) for the timed CUDA exercises.

Without a GPU (or with --cpu) it runs the same stages on the CPU for a few exercises, to test
the plumbing. Exit status 0 when every stub failed and every solution passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tutor.course import Exercise, load_course  # noqa: E402

DEADLINE_S = 570.0  # the whole run, with room to print the summary under 10 minutes
CPU_FALLBACK = ("sigmoid", "func-vmap-linear", "memory-checkpoint")
_START = time.monotonic()


def left() -> float:
    return DEADLINE_S - (time.monotonic() - _START)


def cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - no torch, no CUDA: the fallback says so
        return False


def tutor_check(ex: Exercise, role: str, device: str, env: dict[str, str], timeout: float) -> dict[str, Any]:
    """One `tutor check ID --ROLE --device D --json`; its result dict (status, reason, figures)."""
    cmd = [sys.executable, "-m", "tutor", "check", ex.id, f"--{role}", "--device", device, "--json"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=max(5.0, timeout))
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": f"tutor check took over {timeout:.0f} s", "figures": {}}
    try:
        results = json.loads(done.stdout)
        return results[0]
    except (json.JSONDecodeError, IndexError, KeyError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"status": "error", "reason": f"exit {done.returncode}: {tail[0]}", "figures": {}}


def figure_lines(figures: dict[str, Any]) -> list[str]:
    """One line per timing or memory figure: the learner's beside the reference's."""
    lines = []
    for name, f in figures.items():
        if not isinstance(f, dict):
            continue
        if "learner_s" in f and "reference_s" in f:
            trust = f"too noisy to call: {f['noise_reason']}" if f.get("noise_reason") else "ok"
            lines.append(
                f"    time {name!r}: {1e3 * f['learner_s']:.3f} ms vs {1e3 * f['reference_s']:.3f} ms, "
                f"speedup {f['speedup']:.2f}x [{f.get('clock', '?')}, {f.get('device', '?')}] "
                f"({f.get('compares', '')}) {trust}"
            )
        elif "learner_bytes" in f and "reference_bytes" in f:
            points = {k: len(v) for k, v in (f.get("timeline") or {}).items()}
            lines.append(
                f"    memory {name!r}: {f['learner_bytes'] / 2**20:.2f} MiB vs "
                f"{f['reference_bytes'] / 2**20:.2f} MiB peak [{f.get('device', '?')}] "
                f"timeline points {points or 'none'}"
            )
    return lines


def forced_memory_run(ex: Exercise, device: str) -> tuple[str, list[str]]:
    """Run a memory exercise's reference solution on `device` through the runner directly."""
    from tutor.runner.client import Runner
    from tutor.runner.protocol import RunRequest

    with Runner(cache_dir=Path(os.environ["TUTOR_CACHE"]), device=device) as runner:
        v = runner.run(
            RunRequest(
                exercise=ex.key,
                code=str(ex.solution),
                solution=str(ex.solution),
                checker=str(ex.checker),
                timeout=ex.timeout,
                device=device,
                seed=0,
                memory_limit_mb=8192 if device == "cpu" else None,
                cache_dir=os.environ["TUTOR_CACHE"],
            )
        )
    return f"{v.status}{': ' + v.reason if not v.passed else ''}", figure_lines(v.figures)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cpu", action="store_true", help="the CPU fallback even if a GPU is present")
    p.add_argument("--exercises", nargs="*", help="only these exercise ids")
    p.add_argument("--repeats", type=int, default=3, help="self-timing checks per timed exercise")
    args = p.parse_args(argv)

    device = "cuda" if cuda_available() and not args.cpu else "cpu"
    course = load_course()
    if args.exercises:
        chosen = [course.exercise(i) for i in args.exercises]
    elif device == "cuda":
        chosen = [ex for ex in course.exercises if ex.needs.device in ("cuda", "any")]
    else:
        chosen = [course.exercise(i) for i in CPU_FALLBACK]
    memory_exercises = [
        ex for ex in (course.exercises if not args.exercises else chosen) if "ctx.memory(" in ex.checker.read_text()
    ]
    if device == "cpu":
        memory_exercises = [ex for ex in memory_exercises if ex.id in {e.id for e in chosen}]
        print(
            "no CUDA GPU here (or --cpu): CPU fallback on "
            f"{', '.join(ex.id for ex in chosen)} to test this script's plumbing",
            flush=True,
        )
    home = Path(tempfile.mkdtemp(prefix="tutor-gpu-check-"))
    env = dict(
        os.environ, TUTOR_HOME=str(home / "home"), TUTOR_CACHE=os.environ.get("TUTOR_CACHE") or str(home / "cache")
    )
    os.environ["TUTOR_CACHE"] = env["TUTOR_CACHE"]
    problems: list[str] = []

    print(f"\n== 1-2. stubs must fail, solutions must pass (--device {device}); figures", flush=True)
    for ex in chosen:
        if left() < 60:
            problems.append(f"{ex.id}: not checked, out of time")
            continue
        per = min(left() / 2, 2 * ex.timeout + 60)
        stub = tutor_check(ex, "stubs", device, env, per)
        sol = tutor_check(ex, "solutions", device, env, per)
        # Skipped on both sides is fine only where the machine lacks what the exercise needs
        # (fsdp-bf16 wants two GPUs); anything else skipped on a GPU machine is a problem.
        skipped = stub["status"] == sol["status"] == "skipped" and ex.needs.gpus > 1
        ok_stub = skipped or stub["status"] not in ("passed", "skipped", "timeout")
        ok_sol = skipped or sol["status"] == "passed"
        mark = "ok " if ok_stub and ok_sol else "BAD"
        print(
            f"{mark} {ex.id:24s} stub: {stub['status']:8s} solution: {sol['status']}"
            + (f" ({sol.get('reason', '')})" if sol["status"] != "passed" else ""),
            flush=True,
        )
        for line in figure_lines(sol.get("figures") or {}):
            print(line, flush=True)
        if not ok_stub:
            problems.append(f"{ex.id}: the stub was {stub['status']} ({stub.get('reason', '')})")
        if not ok_sol:
            problems.append(f"{ex.id}: the solution was {sol['status']} ({sol.get('reason', '')})")

    print(f"\n== 3. memory exercises' reference solutions on {device} (allocator peak, timeline)", flush=True)
    for ex in memory_exercises:
        if left() < 60:
            print(f"    {ex.id}: skipped, out of time")
            continue
        status, lines = forced_memory_run(ex, device)
        print(f"    {ex.id}: {status}", flush=True)
        for line in lines:
            print(line, flush=True)

    print(f"\n== 4. reference timed against itself on {device} (target 1.00 +- 0.05)", flush=True)
    import bench_runner
    from tutor.runner.client import Runner

    timed = [ex for ex in chosen if "ctx.time(" in ex.checker.read_text()]
    with Runner(cache_dir=Path(env["TUTOR_CACHE"]), device=device) as runner:
        for ex in timed:
            if left() < 45 * args.repeats:
                print(f"    {ex.id}: skipped, out of time", flush=True)
                continue
            run_on = device if ex.needs.device != "cpu" else "cpu"
            for name, figs in bench_runner.self_timings(runner, ex, args.repeats, run_on).items():
                cells = " ".join(f"{f['speedup']:.3f}" + ("N" if f.get("noisy") else "") for f in figs)
                clock = ",".join(sorted({str(f.get("clock")) for f in figs}))
                print(f"    {ex.id:22s} {name[:28]:28s} {cells}  [{clock}]", flush=True)

    took = time.monotonic() - _START
    print(f"\n{len(chosen)} exercises on {device} in {took:.0f} s", flush=True)
    for line in problems:
        print(f"PROBLEM: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
