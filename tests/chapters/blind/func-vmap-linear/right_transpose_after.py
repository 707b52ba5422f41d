"""RIGHT: maps the layers to the default out_dims=0 and moves that dimension to the middle with movedim (a permutation, not a reshape), through a lambda closing over x."""

import torch
from torch.func import vmap
from torch.nn import functional as F


def batched_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (batch, in), weight: (N, out, in), bias: (N, out) -> (batch, N, out)."""
    per_layer = vmap(lambda w, b: F.linear(x, w, b))(weight, bias)  # (N, batch, out)
    return per_layer.movedim(0, 1)


def loop_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with a Python loop: one F.linear call per layer."""
    return torch.stack([F.linear(x, w, b) for w, b in zip(weight, bias)], dim=1)
