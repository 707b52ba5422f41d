"""WRONG: treats a (1, n) stack of directions as one direction and returns shape (n,), breaking "the result has the shape of v" for k = 1 (an allclose against H @ v.T broadcasts and would not notice)."""

import torch
from torch.func import grad, jvp, vmap


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""

    def one(direction):
        return jvp(grad(f), (x,), (direction,))[1]

    if v.dim() == 1 or v.shape[0] == 1:
        return one(v.reshape(-1))
    return vmap(one)(v)
