"""WRONG: calls model.train() at the start of maml_loss ("meta-training") and leaves it there, so a model the caller had put in eval mode comes back in training mode, although maml_loss should only return a scalar for the caller to backpropagate."""

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
        params = {k: params[k] - lr * g[k] for k in params}
    return params


def maml_loss(model: nn.Module, support_x, support_y, query_x, query_y, lr: float, steps: int) -> torch.Tensor:
    """Mean over tasks (dim 0 of every argument) of the query loss after adapting to the
    support set. Differentiable with respect to model's parameters (second-order MAML)."""
    model.train()
    params = dict(model.named_parameters())

    def task_loss(sx, sy, qx, qy):
        adapted = inner_adapt(model, params, sx, sy, lr, steps)
        return F.mse_loss(functional_call(model, adapted, (qx,)), qy)

    return vmap(task_loss)(support_x, support_y, query_x, query_y).mean()
