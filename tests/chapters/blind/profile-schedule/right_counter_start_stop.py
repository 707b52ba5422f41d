"""RIGHT: numbers the traces with an itertools.count in the handler (trace_000.json, ...) and drives the profiler with start()/stop() in a try/finally instead of a with block."""

import itertools
import os
from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule


def profile_steps(
    step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int, active: int, repeat: int, trace_dir: str
) -> None:
    numbers = itertools.count()

    def write(prof: profile) -> None:
        prof.export_chrome_trace(os.path.join(trace_dir, f"trace_{next(numbers):03d}.json"))

    prof = profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=write,
    )
    prof.start()
    try:
        step = 0
        while step < num_steps:
            step_fn()
            step += 1
            prof.step()
    finally:
        prof.stop()
