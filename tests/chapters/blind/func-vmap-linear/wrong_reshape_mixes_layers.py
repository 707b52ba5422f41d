"""WRONG: maps the layers to dim 0 and then reshapes to (batch, N, out), which the stub warns "gives the right shape but mixes up the layers" instead of putting the layer index in the middle."""

import torch
from torch.func import vmap
from torch.nn import functional as F


def batched_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (batch, in), weight: (N, out, in), bias: (N, out) -> (batch, N, out)."""
    out = vmap(F.linear, in_dims=(None, 0, 0))(x, weight, bias)  # (N, batch, out)
    return out.reshape(x.shape[0], weight.shape[0], weight.shape[1])


def loop_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with a Python loop: one F.linear call per layer."""
    return torch.stack([F.linear(x, w, b) for w, b in zip(weight, bias)], dim=1)
