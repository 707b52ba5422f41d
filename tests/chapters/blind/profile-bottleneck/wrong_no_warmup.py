"""WRONG: profiles the very first calls of the model with no warm-up, so one-off start-up costs land in the profile, against the guide's "Warm the model up before profiling"."""

import torch
from torch.profiler import ProfilerActivity, profile


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    with torch.no_grad():
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                model(x)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    top = max(events, key=lambda e: e.self_cpu_time_total)
    return top.key, top.self_cpu_time_total / total
