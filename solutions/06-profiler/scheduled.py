"""Reference solution: profile a long loop with a schedule, writing one trace per active window."""

from pathlib import Path
from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule


def profile_steps(step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int,
                  active: int, repeat: int, trace_dir: str) -> None:
    def handler(prof: profile) -> None:
        prof.export_chrome_trace(str(Path(trace_dir) / f"trace_step{prof.step_num}.json"))  # key

    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),  # key
                 on_trace_ready=handler) as prof:  # key
        # The schedule advances only on prof.step(), which marks the END of a step.
        for _ in range(num_steps):
            step_fn()
            prof.step()  # key
