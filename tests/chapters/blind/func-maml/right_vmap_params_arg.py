"""RIGHT: uses grad_and_value and torch.utils._pytree.tree_map for the update, and vmaps the task loss with the shared parameters passed as an explicit argument with in_dims=None."""

import torch
from torch import nn
from torch.func import functional_call, grad_and_value, vmap
from torch.nn import functional as F
from torch.utils._pytree import tree_map


def inner_adapt(
    model: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, lr: float, steps: int
) -> dict[str, torch.Tensor]:
    """`steps` steps of plain SGD on the MSE loss of (x, y), starting from `params`.
    Returns new tensors, still differentiable with respect to the starting `params`."""

    def loss(p):
        return F.mse_loss(functional_call(model, p, (x,)), y)

    step = grad_and_value(loss)
    for _ in range(steps):
        g, _value = step(params)
        params = tree_map(lambda p, d: p - lr * d, params, g)
    return params


def maml_loss(model: nn.Module, support_x, support_y, query_x, query_y, lr: float, steps: int) -> torch.Tensor:
    """Mean over tasks (dim 0 of every argument) of the query loss after adapting to the
    support set. Differentiable with respect to model's parameters (second-order MAML)."""

    def task_loss(p, sx, sy, qx, qy):
        adapted = inner_adapt(model, p, sx, sy, lr, steps)
        return F.mse_loss(functional_call(model, adapted, (qx,)), qy)

    per_task = vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(
        dict(model.named_parameters()), support_x, support_y, query_x, query_y
    )
    return per_task.mean()
