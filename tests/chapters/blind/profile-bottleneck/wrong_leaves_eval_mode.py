"""WRONG: calls model.eval() for the "inference profile" and never restores the mode, so a caller's model that was training comes back in eval mode (dropout off, BatchNorm frozen); the guide asks for torch.no_grad(), not a mode change."""

import torch
from torch.profiler import ProfilerActivity, profile


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    model.eval()  # inference profile
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
