"""RIGHT: classic autograd instead of torch.func: torch.autograd.functional.vhp (exact double backward on an internal copy of x; v^T H = H v for a symmetric Hessian), one call per direction."""

import torch
from torch.autograd.functional import vhp


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""
    if v.dim() == 1:
        return vhp(f, x, v.to(x.dtype))[1]
    return torch.stack([vhp(f, x, row.to(x.dtype))[1] for row in v])
