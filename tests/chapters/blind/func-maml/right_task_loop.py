"""RIGHT: loops over the tasks in Python (the guide allows it) and averages with sum/len, with the inner loss written as a function of (params, x, y) differentiated by grad(argnums=0)."""

import torch
from torch import nn
from torch.func import functional_call, grad
from torch.nn import functional as F


def _mse(model, params, x, y):
    return F.mse_loss(functional_call(model, params, (x,)), y)


def inner_adapt(
    model: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, lr: float, steps: int
) -> dict[str, torch.Tensor]:
    """`steps` steps of plain SGD on the MSE loss of (x, y), starting from `params`.
    Returns new tensors, still differentiable with respect to the starting `params`."""
    step_grad = grad(_mse, argnums=1)
    current = dict(params)
    for _ in range(steps):
        g = step_grad(model, current, x, y)
        current = {name: value - g[name] * lr for name, value in current.items()}
    return current


def maml_loss(model: nn.Module, support_x, support_y, query_x, query_y, lr: float, steps: int) -> torch.Tensor:
    """Mean over tasks (dim 0 of every argument) of the query loss after adapting to the
    support set. Differentiable with respect to model's parameters (second-order MAML)."""
    start = dict(model.named_parameters())
    total = 0.0
    tasks = support_x.shape[0]
    for sx, sy, qx, qy in zip(support_x, support_y, query_x, query_y):
        adapted = inner_adapt(model, start, sx, sy, lr, steps)
        total = total + _mse(model, adapted, qx, qy)
    return total / tasks
