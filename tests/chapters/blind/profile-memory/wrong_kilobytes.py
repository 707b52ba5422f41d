"""WRONG: reports each layer in KB (cpu_memory_usage // 1024, as the guide's demo prints) while the task says layer_memory returns "the bytes that child's forward leaves allocated"; hungriest_layer still picks the right name."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def layer_memory(model: torch.nn.Sequential, x: torch.Tensor) -> dict[str, int]:
    names = [name for name, _ in model.named_children()]
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        h = x
        for name, layer in model.named_children():
            with record_function(name):
                out = layer(h)
            h = out
    by_key = {e.key: e for e in prof.key_averages()}
    return {name: by_key[name].cpu_memory_usage // 1024 for name in names}


def hungriest_layer(model: torch.nn.Sequential, x: torch.Tensor) -> str:
    usage = layer_memory(model, x)
    return max(usage, key=usage.get)
