"""Exercise: Hessian-vector products without forming the Hessian.

Newton-type optimizers, curvature estimates and influence functions need H @ v, the Hessian of
a scalar loss times a vector. For a model with n parameters the Hessian has n * n entries: one
million parameters means 10^12 entries, 4 TB of float32. The product itself has only n.
"""

import torch
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap  # noqa: F401  (pick what you need)


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""
    # TODO: compute the product without ever building the n x n Hessian: its memory must stay
    #       proportional to n (the check measures it at n = 1024 against hessian(f)(x) @ v).
    # TODO: exact derivatives, not finite differences: the check compares with a float64
    #       Hessian, and a float64 x must give a float64 result.
    # TODO: with k directions, treat each row of v as one direction; x is the same for all.
    # TODO: leave x and v as they were (no requires_grad_, no in-place changes).
    raise NotImplementedError("TODO: implement hvp")
