"""WRONG: empties trace_dir (removes every file in it) before profiling "to start clean", deleting files the caller owns, while the task only asks to write one .json file per trace into trace_dir."""

import shutil
from pathlib import Path
from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule


def profile_steps(
    step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int, active: int, repeat: int, trace_dir: str
) -> None:
    out = Path(trace_dir)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)

    def handler(prof: profile) -> None:
        prof.export_chrome_trace(str(out / f"trace_step{prof.step_num}.json"))

    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=handler,
    ) as prof:
        for _ in range(num_steps):
            step_fn()
            prof.step()
