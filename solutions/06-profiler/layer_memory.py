"""Reference solution: find the layer of a model whose forward pass leaves the most memory allocated."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def layer_memory(model: torch.nn.Sequential, x: torch.Tensor) -> dict[str, int]:
    names = [name for name, _ in model.named_children()]
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:  # key
        h = x
        # Hand each output on after its label: a tensor freed inside a label counts against it.
        for name, layer in model.named_children():
            with record_function(name):  # key
                out = layer(h)
            h = out  # key
    by_key = {e.key: e for e in prof.key_averages()}
    return {name: int(by_key[name].cpu_memory_usage) for name in names}  # key


def hungriest_layer(model: torch.nn.Sequential, x: torch.Tensor) -> str:
    usage = layer_memory(model, x)
    return max(usage, key=usage.get)
