"""WRONG: calls torch.set_num_threads(1) at import to steady the timing, a global setting that outlives the module and slows every other computation of the caller (the task is one function, not a change to the process)."""

import torch
from torch.func import vmap
from torch.nn import functional as F

torch.set_num_threads(1)


def batched_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (batch, in), weight: (N, out, in), bias: (N, out) -> (batch, N, out)."""
    return vmap(F.linear, in_dims=(None, 0, 0), out_dims=1)(x, weight, bias)


def loop_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with a Python loop: one F.linear call per layer."""
    return torch.stack([F.linear(x, w, b) for w, b in zip(weight, bias)], dim=1)
