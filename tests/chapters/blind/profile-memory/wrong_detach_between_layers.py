"""WRONG: hands each output on as out.detach(), which cuts the graph between layers, so a parameter-free layer (pairwise differences, token mixing, add a constant) gets an input that needs no grad and saves nothing for backward: not "one forward pass with autograd on (as in training)"."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def layer_memory(model: torch.nn.Sequential, x: torch.Tensor) -> dict[str, int]:
    names = [name for name, _ in model.named_children()]
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        h = x
        for name, layer in model.named_children():
            with record_function(name):
                out = layer(h)
            h = out.detach()  # each layer measured on its own, not through the previous graph
    by_key = {e.key: e for e in prof.key_averages()}
    return {name: int(by_key[name].cpu_memory_usage) for name in names}


def hungriest_layer(model: torch.nn.Sequential, x: torch.Tensor) -> str:
    usage = layer_memory(model, x)
    return max(usage, key=usage.get)
