"""WRONG: bumps warmup=0 up to 1 to silence the profiler's "won't be using warmup" warning, so the schedule is no longer schedule(wait=wait, warmup=warmup, ...) and every window after the first shifts by a step."""

from pathlib import Path
from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule


def profile_steps(
    step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int, active: int, repeat: int, trace_dir: str
) -> None:
    def handler(prof: profile) -> None:
        prof.export_chrome_trace(str(Path(trace_dir) / f"trace_step{prof.step_num}.json"))

    plan = schedule(wait=wait, warmup=max(warmup, 1), active=active, repeat=repeat)
    with profile(activities=[ProfilerActivity.CPU], schedule=plan, on_trace_ready=handler) as prof:
        for _ in range(num_steps):
            step_fn()
            prof.step()
