"""Exercise: N linear layers applied to one shared batch, with vmap.

`weight` stacks N weight matrices along dim 0 and `bias` N bias vectors. Every layer sees the
same input batch `x`. The result puts the layer index in the middle: (batch, N, out).
`loop_linear` is the plain-Python version to compare with (and to beat).
"""

import torch
from torch.func import vmap  # noqa: F401  (you will need it)
from torch.nn import functional as F


def batched_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (batch, in), weight: (N, out, in), bias: (N, out) -> (batch, N, out)."""
    # TODO: one vmapped call over the layers, no Python loop. Decide which arguments carry the
    #       layer index (and which one every layer shares), and make sure the layer index ends up
    #       in the MIDDLE of the result. Watch out: a reshape gives the right shape but mixes
    #       up the layers.
    raise NotImplementedError("TODO: implement batched_linear with torch.func.vmap")


def loop_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with a Python loop: one F.linear call per layer."""
    return torch.stack([F.linear(x, w, b) for w, b in zip(weight, bias)], dim=1)
