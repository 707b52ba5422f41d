"""WRONG: changes the working directory to trace_dir so the handler can write bare file names, and never changes back, leaving the caller's process in another cwd; the task only asks to write the traces into trace_dir."""

import os
from pathlib import Path  # noqa: F401
from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule


def profile_steps(
    step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int, active: int, repeat: int, trace_dir: str
) -> None:
    os.chdir(trace_dir)

    def handler(prof: profile) -> None:
        prof.export_chrome_trace(f"trace_step{prof.step_num}.json")

    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=handler,
    ) as prof:
        for _ in range(num_steps):
            step_fn()
            prof.step()
