"""RIGHT: builds a {key: self time} dict from key_averages(), picks the maximum with max(d, key=d.get), and divides by math.fsum over all rows; the warm-up is a single call."""

import math

import torch
from torch.profiler import ProfilerActivity, profile


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    with torch.no_grad():
        model(x)  # warm-up
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                model(x)
    rows = list(prof.key_averages())
    self_us = {row.key: row.self_cpu_time_total for row in rows}
    name = max(self_us, key=self_us.get)
    return name, float(self_us[name] / math.fsum(row.self_cpu_time_total for row in rows))
