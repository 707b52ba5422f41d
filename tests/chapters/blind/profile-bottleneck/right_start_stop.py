"""RIGHT: drives the profiler with start()/stop() instead of a with block, disables autograd with set_grad_enabled(False) as a context manager, warms up 5 times, and uses EventList.self_cpu_time_total as the denominator."""

import torch
from torch.profiler import ProfilerActivity, profile


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    prof = profile(activities=[ProfilerActivity.CPU])
    with torch.set_grad_enabled(False):
        for _ in range(5):
            model(x)
        prof.start()
        try:
            for _ in range(iters):
                model(x)
        finally:
            prof.stop()
    rows = prof.key_averages()
    ranked = sorted(rows, key=lambda r: r.self_cpu_time_total, reverse=True)
    return ranked[0].key, ranked[0].self_cpu_time_total / rows.self_cpu_time_total
