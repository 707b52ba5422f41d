"""Exercise: find the layer of a model whose forward pass leaves the most memory allocated.

During training, each layer's forward leaves behind its output and whatever it saves for the
backward pass; those activations are what fills memory. The profiler measures them when you
label each layer with record_function and profile with profile_memory=True.
"""

import torch
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: F401


def layer_memory(model: torch.nn.Sequential, x: torch.Tensor) -> dict[str, int]:
    """Bytes each top-level layer of `model` leaves allocated in ONE forward pass with autograd on
    (as in training), keyed by the layer's name in `model.named_children()`.

    This is the "CPU Mem" column of the table (cpu_memory_usage) for the layer's label.
    """
    # TODO: a memory profile of ONE forward pass in which every top-level layer runs under a
    #       label of its own name, so the table has one row per layer.
    # TODO: watch out for what counts against a label: anything freed inside it is subtracted.
    #       The previous layer's output must not be released inside the next layer's label.
    # TODO: training conditions: whatever the layers save for backward is the point.
    # TODO: read, for each label, the column that includes the ops inside it.
    raise NotImplementedError("TODO: measure the memory of each layer")


def hungriest_layer(model: torch.nn.Sequential, x: torch.Tensor) -> str:
    """The name of the layer with the largest value in layer_memory(model, x)."""
    # TODO: on top of layer_memory
    raise NotImplementedError("TODO: pick the layer with the most memory")
