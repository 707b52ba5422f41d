"""WRONG: calls model.train() for "training conditions" and leaves the caller's model in training mode; the task asks for autograd on, which is a grad-mode matter, not a change to the caller's module."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def layer_memory(model: torch.nn.Sequential, x: torch.Tensor) -> dict[str, int]:
    model.train()
    names = [name for name, _ in model.named_children()]
    with torch.enable_grad():
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            h = x
            for name, layer in model.named_children():
                with record_function(name):
                    out = layer(h)
                h = out
    by_key = {e.key: e for e in prof.key_averages()}
    return {name: int(by_key[name].cpu_memory_usage) for name in names}


def hungriest_layer(model: torch.nn.Sequential, x: torch.Tensor) -> str:
    usage = layer_memory(model, x)
    return max(usage, key=usage.get)
