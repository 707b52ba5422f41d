"""Exercise: the MAML inner loop with torch.func.grad, and the meta-loss over tasks.

MAML learns an initialisation: for each task, a few SGD steps on its support set adapt the
parameters; the loss of the adapted parameters on the task's query set, averaged over tasks, is
what the outer optimizer minimises, differentiating through the inner steps.
"""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap  # noqa: F401  (you will need them)
from torch.nn import functional as F


def inner_adapt(model: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor,
                lr: float, steps: int) -> dict[str, torch.Tensor]:
    """`steps` steps of plain SGD on the MSE loss of (x, y), starting from `params`.
    Returns new tensors, still differentiable with respect to the starting `params`."""
    # TODO: loss(p) = F.mse_loss(functional_call(model, p, (x,)), y)
    # TODO: repeat `steps` times: g = grad(loss)(params); params = {k: params[k] - lr * g[k]}
    #       (a new dict each step: no in-place updates, no detach, or the outer loop can't learn)
    raise NotImplementedError("TODO: implement inner_adapt")


def maml_loss(model: nn.Module, support_x, support_y, query_x, query_y, lr: float, steps: int) -> torch.Tensor:
    """Mean over tasks (dim 0 of every argument) of the query loss after adapting to the
    support set. Differentiable with respect to model's parameters (second-order MAML)."""
    # TODO: params = dict(model.named_parameters())  (the real parameters: gradients must reach them)
    # TODO: for each task, adapt on (support_x[t], support_y[t]) and take the MSE of the adapted
    #       model on (query_x[t], query_y[t]); return the mean over tasks. A Python loop works;
    #       vmap over the task dim is neater.
    raise NotImplementedError("TODO: implement maml_loss")
