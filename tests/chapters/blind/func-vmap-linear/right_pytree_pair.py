"""RIGHT: vmaps over one pytree argument, the (weight, bias) tuple, with a function closing over x, and lets out_dims=1 place the layer index in the middle."""

import torch
from torch.func import vmap
from torch.nn import functional as F


def batched_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (batch, in), weight: (N, out, in), bias: (N, out) -> (batch, N, out)."""

    def layer(params):
        w, b = params
        return F.linear(x, w, b)

    return vmap(layer, in_dims=((0, 0),), out_dims=1)((weight, bias))


def loop_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with a Python loop: one F.linear call per layer."""
    return torch.stack([F.linear(x, w, b) for w, b in zip(weight, bias)], dim=1)
