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
    # TODO: something the profiler calls each time a window's trace is ready, writing it to a
    #       file of its own in trace_dir (watch out: a fixed name keeps only the last trace).
    # TODO: a CPU profiler driven by a schedule built from the four numbers you were given.
    # TODO: the profiler cannot see where one step ends: tell it, at the right moment, or every
    #       window records the wrong calls of step_fn (or nothing at all).
    raise NotImplementedError("TODO: run the steps under a scheduled profiler")
