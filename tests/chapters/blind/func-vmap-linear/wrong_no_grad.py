"""WRONG: runs under torch.no_grad() for speed, so the result is detached and a multi-head model built on it can no longer train, unlike loop_linear which the task says is "the same computation"."""

import torch
from torch.func import vmap
from torch.nn import functional as F


def batched_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (batch, in), weight: (N, out, in), bias: (N, out) -> (batch, N, out)."""
    with torch.no_grad():
        return vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)(x, weight, bias)


def loop_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with a Python loop: one F.linear call per layer."""
    return torch.stack([F.linear(x, w, b) for w, b in zip(weight, bias)], dim=1)
