"""WRONG: picks the op from prof.events() (single calls), i.e. the op with the longest ONE call and that call's share, instead of the op with the most self CPU time over the profile (key_averages() merges the calls of an op into its row)."""

import torch
from torch.profiler import ProfilerActivity, profile


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    with torch.no_grad():
        for _ in range(3):
            model(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                model(x)
    events = prof.events()
    total = sum(e.self_cpu_time_total for e in events)
    top = max(events, key=lambda e: e.self_cpu_time_total)
    return top.name, top.self_cpu_time_total / total
