"""Reference solution: Hessian-vector products without forming the Hessian."""

import torch
from torch.func import grad, jvp, vmap


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""

    def one(direction):
        # Forward over reverse: the derivative of grad(f) at x along `direction` is H @ direction.
        # It costs about two gradient evaluations and O(n) memory; H itself is never built.
        return jvp(grad(f), (x,), (direction,))[1]  # key

    if v.dim() == 1:
        return one(v)
    # Several directions: map over v's first dim only; x is shared by all of them.
    return vmap(one)(v)  # key
