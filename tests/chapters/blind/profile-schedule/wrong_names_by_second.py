"""WRONG: names each trace after the current second (int(time.time())), so two windows that finish within the same second share a name and the later overwrites the earlier, against "one file per trace, each with a different name"."""

import time
from pathlib import Path
from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule


def profile_steps(
    step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int, active: int, repeat: int, trace_dir: str
) -> None:
    def handler(prof: profile) -> None:
        prof.export_chrome_trace(str(Path(trace_dir) / f"trace_{int(time.time())}.json"))

    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=handler,
    ) as prof:
        for _ in range(num_steps):
            step_fn()
            prof.step()
