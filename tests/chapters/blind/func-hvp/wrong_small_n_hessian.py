"""WRONG: forms the Hessian whenever n is small ("cheaper below 64 inputs") and only switches to jvp above that, so on every small problem it builds the (n, n) matrix the task says the product "must never build"."""

import torch
from torch.func import grad, hessian, jvp, vmap

_SMALL = 64


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""
    if x.shape[0] <= _SMALL:
        h = hessian(f)(x)
        return v @ h.T  # row i: H @ v[i]; a 1-D v gives H @ v

    def one(direction):
        return jvp(grad(f), (x,), (direction,))[1]

    return one(v) if v.dim() == 1 else vmap(one)(v)
