"""RIGHT: uses the ready-made torch.profiler.tensorboard_trace_handler, whose .pt.trace.json files get unique nanosecond names (plain Chrome traces, as the guide says)."""

from typing import Callable

from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


def profile_steps(
    step_fn: Callable[[], None], num_steps: int, wait: int, warmup: int, active: int, repeat: int, trace_dir: str
) -> None:
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=tensorboard_trace_handler(trace_dir, worker_name="steps"),
    ) as prof:
        for _ in range(num_steps):
            step_fn()
            prof.step()
