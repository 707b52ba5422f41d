"""WRONG: double backward on x itself: it sets x.requires_grad_(True) and afterwards forces it back to False, so an x that required grad on entry (a model's parameter vector) comes back not requiring grad, against "must leave x and v as they were"."""

import torch


def hvp(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for a scalar function f, where H is the Hessian of f at x (shape (n, n) for x
    of shape (n,)). v is one direction (n,) or k directions (k, n); the result has v's shape."""
    x.requires_grad_(True)
    try:
        with torch.enable_grad():
            (g,) = torch.autograd.grad(f(x), x, create_graph=True)
            rows = v.reshape(-1, x.shape[0])
            out = torch.stack([torch.autograd.grad(g, x, grad_outputs=r, retain_graph=True)[0] for r in rows])
    finally:
        x.requires_grad_(False)
    return out.reshape(v.shape).detach()
