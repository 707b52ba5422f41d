"""RIGHT: forward over reverse with an explicit Python loop over the directions (torch.stack of one jvp per row) and a reshape to v's shape, no vmap."""

import torch
from torch.func import grad, jvp


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""
    grad_f = grad(f)
    rows = v.reshape(-1, x.shape[0])
    products = [jvp(grad_f, (x,), (row.to(x.dtype),))[1] for row in rows.unbind(0)]
    return torch.stack(products).reshape(v.shape)
