"""WRONG: pins torch to one thread with torch.set_num_threads(1) to make the profile less noisy and does not restore it, a global setting that slows every later computation of the caller and profiles a configuration the caller does not run."""

import torch
from torch.profiler import ProfilerActivity, profile


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    torch.set_num_threads(1)  # a shared machine: fewer threads, steadier timings
    with torch.no_grad():
        for _ in range(3):
            model(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                model(x)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    top = max(events, key=lambda e: e.self_cpu_time_total)
    return top.key, top.self_cpu_time_total / total
