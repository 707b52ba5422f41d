"""RIGHT: labels each layer "layer <name>" (as in the guide's demo) and maps the rows back to the plain names, guards autograd with torch.enable_grad() as a context manager, and ranks with sorted()."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def layer_memory(model: torch.nn.Sequential, x: torch.Tensor) -> dict[str, int]:
    labels = {name: f"layer {name}" for name, _ in model.named_children()}
    with torch.enable_grad(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        h = x
        for name, layer in model.named_children():
            with record_function(labels[name]):
                out = layer(h)
            h = out
            del out
    rows = {row.key: row for row in prof.key_averages()}
    return {name: int(rows[label].cpu_memory_usage) for name, label in labels.items()}


def hungriest_layer(model: torch.nn.Sequential, x: torch.Tensor) -> str:
    ranked = sorted(layer_memory(model, x).items(), key=lambda item: item[1])
    return ranked[-1][0]
