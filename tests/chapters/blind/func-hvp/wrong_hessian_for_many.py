"""WRONG: for k stacked directions it forms the Hessian once ("amortised over k rows") and multiplies, which breaks "must never build the (n, n) Hessian"; only the single-direction path stays O(n) in memory."""

import torch
from torch.func import grad, hessian, jvp


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""
    if v.dim() == 1:
        return jvp(grad(f), (x,), (v,))[1]
    # k directions: one Hessian, then a single matmul for all of them.
    h = hessian(f)(x)
    return v @ h.T
