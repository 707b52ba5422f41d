"""Exercise: profile a long loop with a schedule, writing one trace per active window.

A schedule keeps the profiler cheap: it sits idle for `wait` steps, records but discards
`warmup` steps, records `active` steps and hands them to `on_trace_ready`; that cycle repeats
`repeat` times (0 = until the loop ends).
"""

from pathlib import Path  # noqa: F401
from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule  # noqa: F401


def profile_steps(step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int,
                  active: int, repeat: int, trace_dir: str) -> None:
    """Call `step_fn()` `num_steps` times under a profiler with
    schedule(wait=wait, warmup=warmup, active=active, repeat=repeat).

    Every time a trace is ready, write it as a Chrome trace (JSON) into `trace_dir`, one file per
    trace, each with a different name ending in ".json".
    """
    # TODO: write a handler(prof) that exports prof's trace to a new file in trace_dir
    #       (prof.step_num is a good way to make the name unique)
    # TODO: profile(activities=[ProfilerActivity.CPU], schedule=schedule(...), on_trace_ready=handler)
    # TODO: in the loop, tell the profiler each time a step has finished
    raise NotImplementedError("TODO: run the steps under a scheduled profiler")
