"""WRONG: takes the inner gradients with torch.autograd.grad(create_graph=True) instead of "using torch.func.grad", so inner_adapt raises when the starting tensors do not require grad or under torch.no_grad() (where the guide notes grad still works), e.g. adapting at test time."""

import torch
from torch import nn
from torch.func import functional_call
from torch.nn import functional as F


def inner_adapt(
    model: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, lr: float, steps: int
) -> dict[str, torch.Tensor]:
    """`steps` steps of plain SGD on the MSE loss of (x, y), starting from `params`.
    Returns new tensors, still differentiable with respect to the starting `params`."""
    names = list(params)
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, [params[k] for k in names], create_graph=True)
        params = {k: params[k] - lr * g for k, g in zip(names, grads)}
    return params


def maml_loss(model: nn.Module, support_x, support_y, query_x, query_y, lr: float, steps: int) -> torch.Tensor:
    """Mean over tasks (dim 0 of every argument) of the query loss after adapting to the
    support set. Differentiable with respect to model's parameters (second-order MAML)."""
    params = dict(model.named_parameters())
    losses = []
    for t in range(support_x.shape[0]):
        adapted = inner_adapt(model, params, support_x[t], support_y[t], lr, steps)
        losses.append(F.mse_loss(functional_call(model, adapted, (query_x[t],)), query_y[t]))
    return torch.stack(losses).mean()
