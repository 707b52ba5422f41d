"""RIGHT: reverse over reverse: the vjp of grad(f) at x (H is symmetric, so v^T H = H v), with one vjp function reused for every row of v through vmap."""

import torch
from torch.func import grad, vjp, vmap


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""
    _, pullback = vjp(grad(f), x)

    def one(direction):
        return pullback(direction.to(x.dtype))[0]

    if v.dim() == 1:
        return one(v)
    return vmap(one)(v)
