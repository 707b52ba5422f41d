"""WRONG: writes each SGD update back into the caller's `params` dict, so after inner_adapt the caller's starting dict holds the adapted tensors, although the stub says the function "returns new tensors" starting from `params`."""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F


def inner_adapt(
    model: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, lr: float, steps: int
) -> dict[str, torch.Tensor]:
    """`steps` steps of plain SGD on the MSE loss of (x, y), starting from `params`.
    Returns new tensors, still differentiable with respect to the starting `params`."""

    def loss(p):
        return F.mse_loss(functional_call(model, p, (x,)), y)

    for _ in range(steps):
        g = grad(loss)(params)
        for k in g:
            params[k] = params[k] - lr * g[k]  # out of place: a new tensor, still in the graph
    return params


def maml_loss(model: nn.Module, support_x, support_y, query_x, query_y, lr: float, steps: int) -> torch.Tensor:
    """Mean over tasks (dim 0 of every argument) of the query loss after adapting to the
    support set. Differentiable with respect to model's parameters (second-order MAML)."""
    losses = []
    for t in range(support_x.shape[0]):
        params = dict(model.named_parameters())
        adapted = inner_adapt(model, params, support_x[t], support_y[t], lr, steps)
        losses.append(F.mse_loss(functional_call(model, adapted, (query_x[t],)), query_y[t]))
    return torch.stack(losses).mean()
