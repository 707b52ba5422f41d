"""Reference solution: find the op that takes the most self CPU time in a model's forward pass."""

import torch
from torch.profiler import ProfilerActivity, profile


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    with torch.no_grad():
        for _ in range(3):  # warm-up: first calls pay for allocations and kernel selection
            model(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                model(x)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)  # key
    top = max(events, key=lambda e: e.self_cpu_time_total)  # key
    return top.key, top.self_cpu_time_total / total  # key
