"""Reference solution: N linear layers applied to one shared batch, with vmap."""

import torch
from torch.func import vmap
from torch.nn import functional as F


def batched_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (batch, in), weight: (N, out, in), bias: (N, out) -> (batch, N, out)."""
    # x is shared (in_dims None); weight and bias are mapped over dim 0; the mapped dimension
    # is placed at dim 1 of the result (out_dims=1).
    return vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)(x, weight, bias)  # key


def loop_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with a Python loop: one F.linear call per layer."""
    return torch.stack([F.linear(x, w, b) for w, b in zip(weight, bias)], dim=1)
