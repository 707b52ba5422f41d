"""WRONG: turns autograd on with a bare torch.set_grad_enabled(True) call ("with autograd on, as in training") and never restores it, so a caller that measured from inside torch.no_grad() keeps recording graphs after the call."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def layer_memory(model: torch.nn.Sequential, x: torch.Tensor) -> dict[str, int]:
    torch.set_grad_enabled(True)
    names = [name for name, _ in model.named_children()]
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
